/** `GET /v1/models`: configured and built-in models with their type and stable aliases, and routing rules. */
import type { AppDeps } from './app-deps.js';
import type { OperationHandler, ResponseBody } from '../http/operation-types.js';

export function modelHandlers(deps: Pick<AppDeps, 'registry'>): { listModels: OperationHandler<'listModels'> } {
  return {
    listModels(_req, res) {
      const body = {
        object: 'list',
        data: deps.registry.list().map((model) => ({
          id: model.id,
          object: 'model',
          created: model.created,
          owned_by: model.provider,
          type: model.type,
          aliases: model.aliases,
          provider: model.provider,
        })),
        routes: deps.registry.routes(),
      } satisfies ResponseBody<'listModels', 200>;
      res.json(body);
    },
  };
}
