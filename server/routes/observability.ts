/**
 * `GET /metrics` (the admin key was checked by auth/authenticate.ts) and `GET /health/ready`. What they answer
 * is made in observability/: the metrics registry and the readiness checks, both given by main.ts.
 */
import type { Response } from 'express';
import type { AppDeps } from './app-deps.js';
import { ApiError } from '../core/api-error.js';
import type { OperationHandler, ResponseBody } from '../http/operation-types.js';

export function observabilityHandlers(
  deps: Pick<AppDeps, 'metrics' | 'readiness' | 'drainingSignal' | 'shutdownSignal'> &
    Partial<Pick<AppDeps, 'registry'>>,
): {
  getMetrics: OperationHandler<'getMetrics'>;
  getReadiness: OperationHandler<'getReadiness'>;
} {
  return {
    async getMetrics(_req, res) {
      if (!deps.metrics) {
        throw new ApiError(404, 'Metrics are turned off (OMNIGATE_METRICS=false).', {
          code: 'metrics_disabled',
          expected: true,
        });
      }
      const text = await deps.metrics.render();
      // Sent as text: the validator checks JSON answers only.
      (res as Response).type(deps.metrics.contentType).send(text);
    },
    async getReadiness(_req, res) {
      const checks = deps.readiness ? [...(await deps.readiness.check())] : [];
      if (deps.drainingSignal?.aborted || deps.shutdownSignal?.aborted) {
        checks.push({ name: 'server', status: 'failing', detail: 'shutting down' });
      }
      const ready = checks.every((check) => check.status === 'ok');
      // Circuits are shown, not judged: an open one is a deployment out, while the model's others serve.
      const deployments = (await deps.registry?.deploymentStates()) ?? [];
      const body = {
        status: ready ? 'ready' : 'not_ready',
        checks,
        ...(deployments.length > 0 ? { deployments } : {}),
      } satisfies ResponseBody<'getReadiness', 200>;
      res.status(ready ? 200 : 503).json(body);
    },
  };
}
