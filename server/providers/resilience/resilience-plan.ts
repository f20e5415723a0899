/**
 * The retry layer's loop, the same for every capability: try the model's deployments in the strategy's order,
 * skipping those whose circuit is open, up to `1 + retries` attempts; then each fallback once; a context-window
 * refusal goes straight to the `context_window_fallbacks`. A deployment tried again waits a jittered
 * exponential backoff (or the `Retry-After` it sent, when that is within `max_backoff_ms`; a longer one takes
 * it out of this call). The whole loop runs within the call's budget (`timeout_ms`): no wait starts that
 * would end past it, and an attempt still running when it ends is stopped (504).
 *
 * An attempt ends when the model's first result is in hand (a stream's first part, a passthrough's first
 * body bytes): nothing has reached the caller yet, so another attempt is still possible. What fails after
 * that goes to the caller, never retried.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiError } from '../../core/api-error.js';
import type { CallContext } from '../../core/call-context.js';
import { circuitChanged, deploymentAttempted } from '../../observability/hooks.js';
import type { ProviderLogger } from '../provider-logger.js';
import type { CircuitBreakers, Permit } from './circuit-breaker.js';
import { judgeFailure } from './judge-failure.js';
import { type createDeploymentStats, orderDeployments, type Strategy } from './select-deployments.js';

export type { Strategy };

/** One place a call may go: a deployment, or a fallback model. */
export interface Target<M> {
  /** The breaker's, the header's and the metrics' name: `provider:model` unless configured. */
  id: string;
  /** The configured provider it runs on. */
  provider: string;
  weight: number;
  upstreamModel: string;
  /** The provider's model, made on first use. */
  model(): M;
}

export interface ResiliencePlan<M> {
  modelId: string;
  deployments: Array<Target<M>>;
  strategy: Strategy;
  retries: number;
  /** Resolved on first use (they name other models of the registry). */
  fallbacks(): Array<Target<M>>;
  contextWindowFallbacks(): Array<Target<M>>;
  /** Undefined: no budget of the layer's own (video: the task queue's attempt timeout bounds it). */
  budgetMs: number | undefined;
  backoffMs: number;
  maxBackoffMs: number;
}

export interface ResilienceRuntime {
  breakers: CircuitBreakers;
  stats: ReturnType<typeof createDeploymentStats>;
  logger?: ProviderLogger;
  random?: () => number;
}

/** A committed attempt: its value, where it ran, and `done` to call when the call is over (a stream's end). */
export interface Committed<M, R> {
  value: R;
  target: Target<M>;
  attempts: number;
  done(): void;
}

export interface RunOptions<M> {
  /** Tried first when its circuit allows (a video task resuming the job its checkpoint names). */
  prefer?: string;
  /** Targets this call cannot use (a passthrough to a fallback that does not speak the dialect). */
  usable?(target: Target<M>): boolean;
}

const DEADLINE = Symbol('deadline');

export async function runResilient<M, R>(
  plan: ResiliencePlan<M>,
  runtime: ResilienceRuntime,
  context: CallContext,
  attempt: (target: Target<M>, signal: AbortSignal) => Promise<R>,
  options: RunOptions<M> = {},
): Promise<Committed<M, R>> {
  const random = runtime.random ?? Math.random;
  const { breakers, stats } = runtime;
  const caller = context.signal;
  // One signal for every attempt: aborted when the caller leaves, or when the budget runs out before an answer.
  const controller = new AbortController();
  const onAbort = () => controller.abort(caller.reason);
  if (caller.aborted) {
    controller.abort(caller.reason);
  } else {
    caller.addEventListener('abort', onAbort, { once: true });
  }
  const startedAt = Date.now();
  const deadline = plan.budgetMs === undefined ? Number.POSITIVE_INFINITY : startedAt + plan.budgetMs;
  const timer = plan.budgetMs === undefined ? undefined : setTimeout(() => controller.abort(DEADLINE), plan.budgetMs);
  const detach = () => {
    clearTimeout(timer);
    caller.removeEventListener('abort', onAbort);
  };

  let attempts = 0;
  let last: { target: Target<M>; error: unknown } | undefined;
  const triedCount = new Map<string, number>();
  const lastRetryAfter = new Map<string, number>();
  const excluded = new Set<string>();

  const budgetError = () =>
    new ApiError(
      504,
      `No deployment of the model '${plan.modelId}' answered within ${plan.budgetMs} ms (${attempts} attempts).`,
      { code: 'upstream_timeout' },
    );
  const report = (target: Target<M> | undefined) =>
    context.attempted?.({ deployment: target?.id ?? null, provider: target?.provider ?? null, attempts });

  /** One attempt on `target`; the committed result, or undefined to go on (`contextWindow` when that is why). */
  async function tryTarget(target: Target<M>): Promise<Committed<M, R> | 'skip' | 'failed' | 'context-window'> {
    if (excluded.has(target.id) || (options.usable && !options.usable(target))) {
      return 'skip';
    }
    const permit: Permit = await breakers.acquire(target.id);
    if (!permit.allowed) {
      return 'skip';
    }
    const times = triedCount.get(target.id) ?? 0;
    if (times > 0) {
      const wanted = lastRetryAfter.get(target.id);
      let delay: number;
      if (wanted !== undefined) {
        delay = wanted;
      } else {
        const ceiling = Math.min(plan.maxBackoffMs, plan.backoffMs * 2 ** (times - 1));
        delay = ceiling / 2 + (random() * ceiling) / 2;
      }
      if (delay > plan.maxBackoffMs || Date.now() + delay >= deadline) {
        // Not worth waiting for (or past the budget): this deployment sits out the rest of the call.
        excluded.add(target.id);
        await breakers.release(target.id, permit);
        return 'skip';
      }
      if (delay > 0) {
        try {
          await sleep(delay, undefined, { signal: controller.signal });
        } catch {
          await breakers.release(target.id, permit);
          throw controller.signal.reason === DEADLINE ? budgetError() : (last?.error ?? abortError());
        }
      }
    }
    triedCount.set(target.id, times + 1);
    attempts += 1;
    context.attemptStarted?.({ deployment: target.id, provider: target.provider });
    stats.started(target.id);
    const began = performance.now();
    try {
      const value = await attempt(target, controller.signal);
      stats.answered(target.id, performance.now() - began);
      deploymentAttempted(target.id, null);
      if (permit.probe || permit.failures > 0) {
        circuitChanged(target.id, 'closed');
      }
      await breakers.success(target.id, permit);
      let finished = false;
      return {
        value,
        target,
        attempts,
        done: () => {
          if (!finished) {
            finished = true;
            stats.ended(target.id);
            caller.removeEventListener('abort', onAbort);
          }
        },
      };
    } catch (thrown) {
      stats.ended(target.id);
      const timedOut = controller.signal.reason === DEADLINE && !caller.aborted;
      const error = timedOut ? budgetError() : thrown;
      const verdict = timedOut
        ? { retry: false, againstDeployment: true, contextWindow: false, cause: 'timeout' }
        : judgeFailure(thrown, caller);
      last = { target, error };
      deploymentAttempted(target.id, verdict.cause);
      runtime.logger?.warn(
        {
          requestId: context.requestId,
          model: plan.modelId,
          deployment: target.id,
          attempt: attempts,
          cause: verdict.cause,
          status: (thrown as { status?: unknown })?.status,
          retried: verdict.retry && !timedOut,
          err: (thrown as Error)?.message,
        },
        'upstream attempt failed',
      );
      if (verdict.againstDeployment) {
        const state = await breakers.failure(target.id, permit);
        if (state !== 'closed') {
          circuitChanged(target.id, state);
        }
      } else if (verdict.cause === 'client_closed') {
        await breakers.release(target.id, permit);
      } else {
        await breakers.success(target.id, permit);
      }
      if ('retryAfterMs' in verdict && verdict.retryAfterMs !== undefined) {
        lastRetryAfter.set(target.id, verdict.retryAfterMs);
      } else {
        lastRetryAfter.delete(target.id);
      }
      if (verdict.contextWindow) {
        return 'context-window';
      }
      if (!verdict.retry || timedOut) {
        throw error;
      }
      return 'failed';
    }
  }

  function abortError(): ApiError {
    return new ApiError(499, 'The client closed the request.', { code: 'client_closed_request' });
  }

  async function tryList(
    targets: Array<Target<M>>,
    maxAttempts: number,
  ): Promise<Committed<M, R> | 'context-window' | undefined> {
    let made = 0;
    let skippedInRow = 0;
    for (let cursor = 0; made < maxAttempts && skippedInRow < targets.length; cursor += 1) {
      if (caller.aborted) {
        throw last?.error ?? abortError();
      }
      if (Date.now() >= deadline) {
        throw budgetError();
      }
      const outcome = await tryTarget(targets[cursor % targets.length]!);
      if (outcome === 'skip') {
        skippedInRow += 1;
        continue;
      }
      skippedInRow = 0;
      if (outcome === 'context-window') {
        return outcome;
      }
      made += 1;
      if (outcome !== 'failed') {
        return outcome;
      }
    }
    return undefined;
  }

  try {
    let outcome: Committed<M, R> | 'context-window' | undefined;
    const order = orderDeployments(plan.deployments, plan.strategy, stats.get, random);
    if (options.prefer !== undefined) {
      const at = order.findIndex((target) => target.id === options.prefer);
      if (at > 0) {
        order.unshift(...order.splice(at, 1));
      }
    }
    outcome = await tryList(order, 1 + plan.retries);
    if (outcome === undefined) {
      const fallbacks = plan.fallbacks();
      outcome = fallbacks.length > 0 ? await tryList(fallbacks, fallbacks.length) : undefined;
    }
    if (outcome === 'context-window') {
      const fallbacks = plan.contextWindowFallbacks();
      outcome = fallbacks.length > 0 ? await tryList(fallbacks, fallbacks.length) : undefined;
      if (outcome === 'context-window' || outcome === undefined) {
        throw last!.error;
      }
    }
    if (outcome === undefined) {
      throw (
        last?.error ??
        new ApiError(
          503,
          `Every deployment of the model '${plan.modelId}' is out after failing (circuit open); try again shortly.`,
          { code: 'deployments_unavailable' },
        )
      );
    }
    clearTimeout(timer);
    report(outcome.target);
    return outcome;
  } catch (error) {
    detach();
    report(last?.target);
    throw error;
  }
}
