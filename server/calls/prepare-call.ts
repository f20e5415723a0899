/**
 * The first step of every call, whatever its capability: resolve the requested model for the caller's key as a
 * model of the operation's type, name it in the call's usage record, and build the call context (abort when
 * the client leaves or the server shuts down, bounded warnings). Routes call `prepareCall(deps, scope, model,
 * 'image')` with the request's call scope (http/call-scope.ts) and get the `ImageModel` to call; nothing here knows a wire format.
 */
import type { Logger } from 'pino';
import type { CallContext } from '../core/call-context.js';
import type { ModelByType, ModelType } from '../core/models.js';
import type { CallScope } from '../http/call-scope.js';
import type { ModelRegistry, ResolvedModel } from '../providers/registry.js';
import type { CallRecord } from '../usage/call-record.js';
import { boundedWarnings } from './bounded-warnings.js';
import { cutText } from '../core/quote-value.js';

/** What preparing a call needs from the application. */
export interface CallDeps {
  registry: ModelRegistry;
  logger: Logger;
  /** Fires when the shutdown grace period is over: running calls stop. */
  shutdownSignal?: AbortSignal;
}

export interface PreparedCall<T extends ModelType> {
  resolved: ResolvedModel;
  model: ModelByType[T];
  /** The usage record of the request this call runs in. */
  call: CallRecord;
  context: CallContext;
  logger: Logger;
  /** Fires when the server shuts down; `context.signal` fires then too, and when the client goes away. */
  shutdown?: AbortSignal;
}

/** The header that says a name was answered by a stand-in model (agent-routes.ts). */
export const STAND_IN_HEADER = 'x-omnigate-warning';

/** The warning, as a header value: printable ASCII only, the requested name cut short. */
function standInWarning(requested: string, model: string, pattern: string): string {
  const name = cutText(requested, 80).replace(/[^\x20-\x7e]/g, '?');
  return `model '${name}' is not configured; answered by '${model}' through the agent route '${pattern}' (configure the model or an upstream for it)`;
}

/** Said on every answer of a model with deployments: which one served it, after how many upstream attempts. */
export const DEPLOYMENT_HEADER = 'x-omnigate-deployment';
export const ATTEMPTS_HEADER = 'x-omnigate-attempts';
/** The same for the search step of a search answer, whose own deployment headers describe the answer's writer. */
export const SEARCH_DEPLOYMENT_HEADER = 'x-omnigate-search-deployment';
export const SEARCH_ATTEMPTS_HEADER = 'x-omnigate-search-attempts';

/**
 * Which of the request's calls this is: `call`, the one the request is about; `search-step`, the search a
 * search answer runs before its model writes (its deployment goes to the record's `search_*` fields and the
 * `x-omnigate-search-*` headers, so the answer-writing model's own stay its own).
 */
export type CallRole = 'call' | 'search-step';

export function prepareCall<T extends ModelType>(
  deps: CallDeps,
  scope: CallScope,
  requestedModel: string,
  type: T,
  role: CallRole = 'call',
): PreparedCall<T> {
  const call = scope.call;
  call.modelRequested = requestedModel;
  const resolved = deps.registry.resolve(requestedModel, type, scope.key);
  call.model = resolved.entry.id;
  call.provider = resolved.entry.provider;
  const requestId = scope.requestId;
  if (resolved.standInFor !== undefined) {
    const warning = standInWarning(requestedModel, resolved.entry.id, resolved.standInFor);
    scope.setHeader(STAND_IN_HEADER, warning);
    deps.logger.warn(
      { requestId, modelRequested: cutText(requestedModel, 80), model: resolved.entry.id, route: resolved.standInFor },
      warning,
    );
  }
  const warn = boundedWarnings((field, reason) =>
    deps.logger.warn({ requestId, field, model: resolved.entry.id }, `accepted but not honoured: ${field} (${reason})`),
  );
  return {
    resolved,
    model: deps.registry.model(resolved, type),
    call,
    context: {
      signal: scope.signal,
      requestId,
      owner: scope.key.id,
      warn,
      // Only models with deployments call it; set before the first byte (retries end there), so headers still go.
      // The record's provider becomes the one that served (or failed last): a deployment's or a fallback's.
      attempted({ deployment, provider, attempts }) {
        if (role === 'search-step') {
          call.searchDeployment = deployment;
          call.searchAttempts = attempts;
          if (deployment !== null) {
            scope.setHeader(SEARCH_DEPLOYMENT_HEADER, deployment.replace(/[^\x20-\x7e]/g, '?'));
          }
          scope.setHeader(SEARCH_ATTEMPTS_HEADER, String(attempts));
          return;
        }
        call.deployment = deployment;
        call.attempts = attempts;
        if (provider !== null) {
          call.provider = provider;
        }
        if (deployment !== null) {
          scope.setHeader(DEPLOYMENT_HEADER, deployment.replace(/[^\x20-\x7e]/g, '?'));
        }
        scope.setHeader(ATTEMPTS_HEADER, String(attempts));
      },
    },
    logger: deps.logger,
    shutdown: deps.shutdownSignal,
  };
}
