/**
 * Omnigate's own operations: usage records of the caller's key, health, and the contract itself
 * (`/openapi.json`, `/openapi.yaml`, and the Redoc page at `/docs`, where `/` sends a browser).
 */
import type { Response } from 'express';
import type { AppDeps } from './app-deps.js';
import { scopeOf } from '../http/call-scope.js';
import { ApiError } from '../core/api-error.js';
import { listPage } from '../http/list-page.js';
import type { OperationHandler, ResponseBody } from '../http/operation-types.js';

type ExtensionOperations =
  | 'listUsage'
  | 'getHealth'
  | 'getOpenApiJson'
  | 'getOpenApiYaml'
  | 'getDocs'
  | 'getRoot'
  | 'getFavicon';

export function extensionHandlers(
  deps: Pick<AppDeps, 'usage' | 'spec' | 'docsPath' | 'version' | 'drainingSignal' | 'shutdownSignal' | 'now'>,
): {
  [O in ExtensionOperations]: OperationHandler<O>;
} {
  const now = deps.now ?? Date.now;
  const startedAt = now();
  return {
    async listUsage(req, res) {
      const key = scopeOf(res).key;
      const { request_id, model, since, until, after, limit, order } = req.query;
      const page = await deps.usage.list({
        keyId: key.id,
        requestId: request_id,
        model,
        since,
        until,
        after,
        limit: limit ?? 20,
        order: order ?? 'desc',
      });
      const data = page.records.map((record) => ({
        id: record.id,
        object: 'usage.record' as const,
        request_id: record.requestId,
        key_id: record.keyId ?? key.id,
        operation: record.operation,
        model_requested: record.modelRequested,
        model: record.model,
        provider: record.provider,
        input_tokens: record.inputTokens,
        output_tokens: record.outputTokens,
        cached_input_tokens: record.cachedInputTokens,
        cache_write_tokens: record.cacheWriteTokens,
        reasoning_tokens: record.reasoningTokens,
        units: record.units,
        media: record.media,
        cost_usd: record.costUsd ?? 0,
        deployment: record.deployment ?? null,
        attempts: record.attempts ?? null,
        search_deployment: record.searchDeployment ?? null,
        search_attempts: record.searchAttempts ?? null,
        status: record.status,
        latency_ms: record.latencyMs,
        created_at: record.createdAt,
      }));
      res.json(listPage(data, page.hasMore) satisfies ResponseBody<'listUsage', 200>);
    },
    getHealth(_req, res) {
      if (deps.drainingSignal?.aborted || deps.shutdownSignal?.aborted) {
        throw new ApiError(503, 'The server is shutting down.', { code: 'shutting_down', expected: true });
      }
      const body = {
        status: 'ok',
        version: deps.version ?? '1.0.0',
        uptime_s: Math.floor((now() - startedAt) / 1000),
      } satisfies ResponseBody<'getHealth', 200>;
      res.json(body);
    },
    getOpenApiJson(_req, res) {
      // Sent as text: the document is already serialised, and the validator need not check it against itself.
      (res as Response).type('application/json').send(deps.spec.json);
    },
    getOpenApiYaml(_req, res) {
      (res as Response).type('application/yaml').send(deps.spec.yaml);
    },
    getRoot(_req, res) {
      res.redirect(302, '/docs');
    },
    getFavicon(_req, res) {
      res.status(204).end();
    },
    getDocs(_req, res) {
      if (!deps.docsPath) {
        throw new ApiError(404, 'The API docs have not been built; run `npm run docs`.', { code: 'docs_not_built' });
      }
      res.type('text/html').sendFile(deps.docsPath);
    },
  };
}
