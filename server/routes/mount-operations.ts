/**
 * The generated server stubs: every operation of the contract is mounted from the spec's own paths and
 * methods onto the handler of the same operationId. No route path is written by hand, so none can drift
 * from the spec, and `Handlers` makes a missing operation a compile error.
 */
import type { Response, Router } from 'express';
import { buildCallScope, type ScopeSettings } from '../http/call-scope.js';
import type { Handlers, OperationId } from '../http/operation-types.js';
import type { OpenApiDocument } from '../spec/load-spec.js';

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** `/v1/videos/{id}/content` → `/v1/videos/:id/content`. */
export function toExpressPath(path: string): string {
  return path.replace(/\{([^}]+)\}/g, ':$1');
}

/** `settings` make each authenticated operation's call scope (http/call-scope.ts), built here once per request. */
export function mountOperations(
  router: Router,
  document: OpenApiDocument,
  handlers: Handlers,
  settings: ScopeSettings = {},
): void {
  const mounted = new Set<string>();
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item?.[method];
      if (!operation) {
        continue;
      }
      const operationId = operation.operationId as OperationId | undefined;
      const handler = operationId ? handlers[operationId] : undefined;
      if (!operationId || !handler) {
        throw new Error(`${method.toUpperCase()} ${path}: no handler for operationId '${operationId}'`);
      }
      mounted.add(operationId);
      router[method](toExpressPath(path), (req, res: Response, next) => {
        res.locals.call.operation = operationId;
        if (res.locals.apiKey) {
          res.locals.scope = buildCallScope(req, res, settings);
        }
        return (handler as (q: typeof req, s: typeof res, n: typeof next) => unknown)(req, res, next);
      });
    }
  }
  const unmounted = Object.keys(handlers).filter((id) => !mounted.has(id));
  if (unmounted.length > 0) {
    throw new Error(`handlers without an operation in the spec: ${unmounted.join(', ')}`);
  }
}
