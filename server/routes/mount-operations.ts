/**
 * The generated server stubs: every operation of the contract is mounted from the spec's own paths and
 * methods onto the handler of the same operationId. No route path is written by hand, so none can drift
 * from the spec, and `Handlers` makes a missing operation a compile error.
 */
import type { Request, Response, Router } from 'express';
import type { CallLimiter } from '../limits/call-limiter.js';
import { buildCallScope, type ScopeSettings } from '../http/call-scope.js';
import type { Handlers, OperationId } from '../http/operation-types.js';
import { contractOperations } from '../spec/contract-operations.js';
import type { OpenApiDocument } from '../spec/load-spec.js';

/** `/v1/videos/{id}/content` → `/v1/videos/:id/content`. */
export function toExpressPath(path: string): string {
  return path.replace(/\{([^}]+)\}/g, ':$1');
}

/**
 * The operations whose calls are limited elsewhere: `/v1/mcp` limits each tool call (routes/mcp-server.ts), so
 * initialize and tools/list spend nothing.
 */
const LIMITED_INSIDE = new Set<string>(['mcpPost']);

/** The request body's size, for the limiter's token estimate: its declared length (0 when chunked). */
function bodyBytes(req: Request): number {
  const length = Number(req.headers['content-length']);
  return Number.isFinite(length) && length > 0 ? length : 0;
}

/**
 * `settings` make each authenticated operation's call scope (http/call-scope.ts), built here once per request.
 * Here, too, every authenticated call meets its key's limits before its handler runs (`settings.limiter`): no
 * route can bypass them, and the call's usage record settles them when it ends.
 */
export function mountOperations(
  router: Router,
  document: OpenApiDocument,
  handlers: Handlers,
  settings: ScopeSettings & { limiter?: CallLimiter } = {},
): void {
  const { limiter } = settings;
  const mounted = new Set<string>();
  for (const { path, method, operation } of contractOperations(document)) {
    const operationId = operation.operationId as OperationId | undefined;
    const handler = operationId ? handlers[operationId] : undefined;
    if (!operationId || !handler) {
      throw new Error(`${method.toUpperCase()} ${path}: no handler for operationId '${operationId}'`);
    }
    mounted.add(operationId);
    const limited = limiter && !LIMITED_INSIDE.has(operationId);
    const run = handler as (q: Request, s: Response, n: (error?: unknown) => void) => unknown;
    router[method](toExpressPath(path), (req, res: Response, next) => {
      res.locals.call.operation = operationId;
      const key = res.locals.apiKey;
      if (key) {
        const scope = buildCallScope(req, res, settings);
        res.locals.scope = scope;
        const admitted = limited
          ? limiter.begin({
              key,
              call: scope.call,
              operation: operationId,
              body: req.body,
              bodyBytes: bodyBytes(req),
              requestId: scope.requestId,
              setHeader: scope.setHeader,
            })
          : undefined;
        if (admitted) {
          return admitted.then(() => run(req, res, next)).catch(next);
        }
      }
      return run(req, res, next);
    });
  }
  const unmounted = Object.keys(handlers).filter((id) => !mounted.has(id));
  if (unmounted.length > 0) {
    throw new Error(`handlers without an operation in the spec: ${unmounted.join(', ')}`);
  }
}
