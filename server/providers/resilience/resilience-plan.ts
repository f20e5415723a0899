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
import { type DeadlineQueue, deadlineQueue, type Waiter } from './deadline-queue.js';
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
const ONCE = { once: true } as const;

function clientClosed(): ApiError {
  return new ApiError(499, 'The client closed the request.', { code: 'client_closed_request' });
}

/** A value or its promise: awaited only when it is one (in-process breakers answer at once, Redis ones later). */
function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | undefined)?.then === 'function';
}

export function runResilient<M, R>(
  plan: ResiliencePlan<M>,
  runtime: ResilienceRuntime,
  context: CallContext,
  attempt: (target: Target<M>, signal: AbortSignal) => Promise<R>,
  options: RunOptions<M> = {},
): Promise<Committed<M, R>> {
  return new ResilientCall(plan, runtime, context, attempt, options).run();
}

/**
 * One call through the loop. Its state is one object (the bookkeeping a retry needs is made only when an attempt
 * fails), and the object is also the committed result the caller gets: the healthy path allocates little.
 */
class ResilientCall<M, R> implements Committed<M, R>, Waiter {
  value!: R;
  target!: Target<M>;
  attempts = 0;
  private last: { target: Target<M>; error: unknown } | undefined;
  /** Made at the first failure: a call whose first attempt answers needs none of them. */
  private triedCount: Map<string, number> | undefined;
  private lastRetryAfter: Map<string, number> | undefined;
  private excluded: Set<string> | undefined;
  private finished = false;
  /** One signal for every attempt: aborted when the caller leaves, or when the budget runs out before an answer. */
  private readonly controller = new AbortController();
  private readonly deadline: number;
  /** Where the call waits for its budget to end (deadline-queue.ts), until it commits or fails. */
  private readonly budget: DeadlineQueue | undefined;
  expiresAt = 0;
  older: Waiter | undefined;
  newer: Waiter | undefined;
  queued = false;
  private readonly onAbort: () => void;

  constructor(
    private readonly plan: ResiliencePlan<M>,
    private readonly runtime: ResilienceRuntime,
    private readonly context: CallContext,
    private readonly attempt: (target: Target<M>, signal: AbortSignal) => Promise<R>,
    private readonly options: RunOptions<M>,
  ) {
    const caller = context.signal;
    const controller = this.controller;
    this.onAbort = () => controller.abort(caller.reason);
    if (caller.aborted) {
      controller.abort(caller.reason);
    } else {
      caller.addEventListener('abort', this.onAbort, ONCE);
    }
    if (plan.budgetMs === undefined) {
      this.deadline = Number.POSITIVE_INFINITY;
    } else {
      this.deadline = Date.now() + plan.budgetMs;
      this.budget = deadlineQueue(plan.budgetMs);
      this.budget.add(this);
    }
  }

  /** The budget ran out before an answer: the attempt in flight is stopped. */
  expire(): void {
    this.controller.abort(DEADLINE);
  }

  /** The call is over (a stream's end): its deployment's count of calls in flight goes down. Callable unbound. */
  readonly done = (): void => {
    if (!this.finished) {
      this.finished = true;
      this.runtime.stats.ended(this.target.id);
      this.context.signal.removeEventListener('abort', this.onAbort);
    }
  };

  async run(): Promise<Committed<M, R>> {
    const { plan, options } = this;
    try {
      const order = orderDeployments(plan.deployments, plan.strategy, this.runtime.stats.get, this.runtime.random);
      if (options.prefer !== undefined) {
        const at = order.findIndex((target) => target.id === options.prefer);
        if (at > 0) {
          order.unshift(...order.splice(at, 1));
        }
      }
      let outcome = await this.tryList(order, 1 + plan.retries);
      if (outcome === undefined) {
        const fallbacks = plan.fallbacks();
        outcome = fallbacks.length > 0 ? await this.tryList(fallbacks, fallbacks.length) : undefined;
      }
      if (outcome === 'context-window') {
        const fallbacks = plan.contextWindowFallbacks();
        outcome = fallbacks.length > 0 ? await this.tryList(fallbacks, fallbacks.length) : undefined;
        if (outcome === 'context-window' || outcome === undefined) {
          throw this.last!.error;
        }
      }
      if (outcome === undefined) {
        throw (
          this.last?.error ??
          new ApiError(
            503,
            `Every deployment of the model '${plan.modelId}' is out after failing (circuit open); try again shortly.`,
            { code: 'deployments_unavailable' },
          )
        );
      }
      this.budget?.remove(this);
      this.report(this.target);
      return this;
    } catch (error) {
      this.budget?.remove(this);
      this.context.signal.removeEventListener('abort', this.onAbort);
      this.report(this.last?.target);
      throw error;
    }
  }

  private report(target: Target<M> | undefined): void {
    this.context.attempted?.({
      deployment: target?.id ?? null,
      provider: target?.provider ?? null,
      attempts: this.attempts,
    });
  }

  private budgetError(): ApiError {
    return new ApiError(
      504,
      `No deployment of the model '${this.plan.modelId}' answered within ${this.plan.budgetMs} ms (${this.attempts} attempts).`,
      { code: 'upstream_timeout' },
    );
  }

  /** Each target in turn (round and round) until one commits, `maxAttempts` are made, or all are skipped. */
  private async tryList(
    targets: Array<Target<M>>,
    maxAttempts: number,
  ): Promise<'committed' | 'context-window' | undefined> {
    const caller = this.context.signal;
    let made = 0;
    let skippedInRow = 0;
    for (let cursor = 0; made < maxAttempts && skippedInRow < targets.length; cursor += 1) {
      if (caller.aborted) {
        throw this.last?.error ?? clientClosed();
      }
      if (Date.now() >= this.deadline) {
        throw this.budgetError();
      }
      const outcome = await this.tryTarget(targets[cursor % targets.length]!);
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

  /** One attempt on `target`: committed (the value is this call's), skipped, failed, or refused for its length. */
  private async tryTarget(target: Target<M>): Promise<'committed' | 'skip' | 'failed' | 'context-window'> {
    const { plan, runtime, context, controller } = this;
    const { breakers, stats } = runtime;
    if (this.excluded?.has(target.id) || (this.options.usable && !this.options.usable(target))) {
      return 'skip';
    }
    const acquired = breakers.acquire(target.id);
    const permit: Permit = isPromise(acquired) ? await acquired : acquired;
    if (!permit.allowed) {
      return 'skip';
    }
    const times = this.triedCount?.get(target.id) ?? 0;
    if (times > 0) {
      const wanted = this.lastRetryAfter?.get(target.id);
      let delay: number;
      if (wanted !== undefined) {
        delay = wanted;
      } else {
        const ceiling = Math.min(plan.maxBackoffMs, plan.backoffMs * 2 ** (times - 1));
        delay = ceiling / 2 + ((runtime.random ?? Math.random)() * ceiling) / 2;
      }
      if (delay > plan.maxBackoffMs || Date.now() + delay >= this.deadline) {
        // Not worth waiting for (or past the budget): this deployment sits out the rest of the call.
        (this.excluded ??= new Set()).add(target.id);
        await breakers.release(target.id, permit);
        return 'skip';
      }
      if (delay > 0) {
        try {
          await sleep(delay, undefined, { signal: controller.signal });
        } catch {
          await breakers.release(target.id, permit);
          throw controller.signal.reason === DEADLINE ? this.budgetError() : (this.last?.error ?? clientClosed());
        }
      }
    }
    this.attempts += 1;
    context.attemptStarted?.({ deployment: target.id, provider: target.provider });
    stats.started(target.id);
    const began = performance.now();
    try {
      const value = await this.attempt(target, controller.signal);
      stats.answered(target.id, performance.now() - began);
      deploymentAttempted(target.id, null);
      if (permit.probe || permit.failures > 0) {
        circuitChanged(target.id, 'closed');
      }
      const settled = breakers.success(target.id, permit);
      if (settled) {
        await settled;
      }
      this.value = value;
      this.target = target;
      return 'committed';
    } catch (thrown) {
      // Only failed attempts are counted per target: the count is read by the next attempt on it, after a failure.
      (this.triedCount ??= new Map()).set(target.id, times + 1);
      stats.ended(target.id);
      const caller = context.signal;
      const timedOut = controller.signal.reason === DEADLINE && !caller.aborted;
      const error = timedOut ? this.budgetError() : thrown;
      const verdict = timedOut
        ? { retry: false, againstDeployment: true, contextWindow: false, cause: 'timeout' }
        : judgeFailure(thrown, caller);
      this.last = { target, error };
      deploymentAttempted(target.id, verdict.cause);
      runtime.logger?.warn(
        {
          requestId: context.requestId,
          model: plan.modelId,
          deployment: target.id,
          attempt: this.attempts,
          cause: verdict.cause,
          status: (thrown as { status?: unknown })?.status,
          retried: verdict.retry && !timedOut,
          err: (thrown as Error)?.message,
        },
        'upstream attempt failed',
      );
      if (verdict.againstDeployment) {
        const failed = breakers.failure(target.id, permit);
        const state = isPromise(failed) ? await failed : failed;
        if (state !== 'closed') {
          circuitChanged(target.id, state);
        }
      } else if (verdict.cause === 'client_closed') {
        await breakers.release(target.id, permit);
      } else {
        await breakers.success(target.id, permit);
      }
      if ('retryAfterMs' in verdict && verdict.retryAfterMs !== undefined) {
        (this.lastRetryAfter ??= new Map()).set(target.id, verdict.retryAfterMs);
      } else {
        this.lastRetryAfter?.delete(target.id);
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
}
