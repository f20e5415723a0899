/**
 * The models a key may use: `GET /v1/models` and `GET /v1/models/{model}` in OpenAI's shape (plus type, aliases,
 * provider and the routing rules), `GET /anthropic/v1/models` and `/anthropic/v1/models/{model_id}` in
 * Anthropic's (chat models only, paged by `after_id`/`before_id`). A model the key may not use is absent from the
 * lists and a 404 when named, as if it did not exist.
 */
import type { AppDeps } from './app-deps.js';
import { ApiError } from '../core/api-error.js';
import { quoteValue } from '../core/quote-value.js';
import type { OperationHandler, ResponseBody } from '../http/operation-types.js';
import type { ModelEntry } from '../providers/registry.js';
import type { ApiKeyRecord } from '../storage/key-store.js';

type ModelHandlers = {
  listModels: OperationHandler<'listModels'>;
  retrieveModel: OperationHandler<'retrieveModel'>;
  listAnthropicModels: OperationHandler<'listAnthropicModels'>;
  getAnthropicModel: OperationHandler<'getAnthropicModel'>;
};

const DEFAULT_PAGE = 20;

function openAiModel(model: ModelEntry): ResponseBody<'retrieveModel', 200> {
  return {
    id: model.id,
    object: 'model',
    created: model.created,
    owned_by: model.provider,
    type: model.type,
    aliases: model.aliases,
    provider: model.provider,
  };
}

function anthropicModel(model: ModelEntry): ResponseBody<'getAnthropicModel', 200> {
  return {
    type: 'model',
    id: model.id,
    display_name: model.id,
    // RFC 3339 without fractional seconds, as Anthropic writes it.
    created_at: new Date(model.created * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    capabilities: null,
    deprecated_at: null,
    lifecycle: 'active',
    line: null,
    max_input_tokens: null,
    max_tokens: null,
    retires_at: null,
  };
}

function notFound(name: string): ApiError {
  return new ApiError(
    404,
    `The model ${quoteValue(name)} does not exist. List the available models with GET /v1/models.`,
    {
      code: 'model_not_found',
      param: 'model',
    },
  );
}

/** The index of a paging cursor in `models`; a cursor naming no listed model is the caller's mistake. */
function cursorIndex(models: ModelEntry[], id: string, param: string): number {
  const at = models.findIndex((model) => model.id === id);
  if (at < 0) {
    throw new ApiError(400, `${param} ${quoteValue(id)} names no listed model.`, { param });
  }
  return at;
}

export function modelHandlers(deps: Pick<AppDeps, 'registry'>): ModelHandlers {
  const keyOf = (locals: { apiKey?: ApiKeyRecord }) => locals.apiKey;
  return {
    listModels(_req, res) {
      const key = keyOf(res.locals);
      const body = {
        object: 'list',
        data: deps.registry.list(key).map(openAiModel),
        routes: deps.registry.routes(key),
      } satisfies ResponseBody<'listModels', 200>;
      res.json(body);
    },
    retrieveModel(req, res) {
      const model = deps.registry.find(req.params.model, keyOf(res.locals));
      if (!model) {
        throw notFound(req.params.model);
      }
      res.json(openAiModel(model));
    },
    listAnthropicModels(req, res) {
      // Every model here is `active`; a lifecycle filter without it asks for none of them.
      const lifecycle = req.query.lifecycle;
      const wanted = lifecycle === undefined || lifecycle.includes('active');
      const chat = wanted ? deps.registry.list(keyOf(res.locals)).filter((model) => model.type === 'chat') : [];
      const limit = req.query.limit ?? DEFAULT_PAGE;
      let page: ModelEntry[];
      let hasMore: boolean;
      if (req.query.before_id !== undefined) {
        const end = cursorIndex(chat, req.query.before_id, 'before_id');
        const start = Math.max(0, end - limit);
        page = chat.slice(start, end);
        hasMore = start > 0;
      } else {
        const start = req.query.after_id === undefined ? 0 : cursorIndex(chat, req.query.after_id, 'after_id') + 1;
        page = chat.slice(start, start + limit);
        hasMore = start + limit < chat.length;
      }
      const body = {
        data: page.map(anthropicModel),
        has_more: hasMore,
        first_id: page[0]?.id ?? null,
        last_id: page[page.length - 1]?.id ?? null,
      } satisfies ResponseBody<'listAnthropicModels', 200>;
      res.json(body);
    },
    getAnthropicModel(req, res) {
      const model = deps.registry.find(req.params.model_id, keyOf(res.locals));
      if (model?.type !== 'chat') {
        throw notFound(req.params.model_id);
      }
      res.json(anthropicModel(model));
    },
  };
}
