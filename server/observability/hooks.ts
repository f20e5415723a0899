/**
 * Where the rest of the server tells metrics and traces what happened, without knowing whether either is on.
 * Both are optional and installed once at start (main.ts loads them by dynamic import only when configured), so
 * with neither the hot path pays one property read per hook: `observers.metrics` / `observers.tracing` are
 * undefined, and `startUpstreamAttempt` hands out one shared no-op.
 *
 * The hooks, each called from one place:
 * - `runRequest`: http/request-start.ts, before anything else runs (tracing opens the request's span);
 * - `requestSignal`: http/abort-on-close.ts, naming the request behind the abort signal its upstream calls
 *   carry (tracing finds a client span's parent through it, without an async context on every promise);
 * - `callEnded`: usage/call-record.ts, when the call record is finalised (after a stream's last token);
 * - `streamOpened`: http/sse.ts, when an SSE answer starts;
 * - `upstreamStarted`: providers/upstream/http-client.ts, for each upstream request;
 * - `deploymentAttempted`, `circuitChanged`: providers/resilience/, per attempt of the retry layer and per
 *   change of a deployment's circuit.
 * - `limitsStoreFailed`: limits/call-limiter.ts, when the limit counters cannot be reached.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Usage } from '../core/chat.js';
import type { MediaUsage } from '../core/models.js';

/** What a call did, as its call record (usage/call-record.ts) holds it. */
export interface CallFacts {
  /** The operationId, or `unknown` when no handler took the request. */
  operation: string;
  modelRequested: string | null;
  /** The resolved model id (from the registry), or null. */
  model: string | null;
  provider: string | null;
  usage: Usage | null;
  units: number | null;
  /** What a media call produced; `units` holds its headline amount. */
  media: MediaUsage | null;
}

/** What one finished call was: its record's facts and how it ended. */
export interface CallOutcome extends CallFacts {
  status: number;
  /** `performance.now()` when the request arrived. */
  startedAt: number;
  /** `performance.now()` when the response head was written (app-server.ts), when it was. */
  headAt: number | undefined;
  /** The error code answered (`key_jobs_limit`, …), when the call failed. */
  errorCode: string | undefined;
  keyId: string | undefined;
  /** What the call cost in USD by the price table (0 for a built-in model or one without a price). */
  costUsd: number;
}

/** One upstream request in flight. */
export interface UpstreamAttempt {
  /** Headers to send with it (`traceparent`), or undefined. */
  readonly headers: Record<string, string> | undefined;
  /**
   * Called once: with nothing when the answer was read, with the error otherwise; `cause` overrides the cause
   * read from the error (`body_interrupted`: the answer broke off after its head).
   */
  end(error?: unknown, cause?: string): void;
}

export interface Observer {
  /** Runs the rest of the request (`next`); tracing opens the request's server span first. */
  runRequest?(req: IncomingMessage, res: ServerResponse, requestId: string, next: () => void): void;
  /** `signal` is the request's: upstream requests carrying it belong to that request. */
  requestSignal?(signal: AbortSignal, res: ServerResponse): void;
  callEnded?(outcome: CallOutcome, res: ServerResponse): void;
  streamOpened?(res: ServerResponse): void;
  upstreamStarted?(provider: string, method: string, path: string, signal: AbortSignal): UpstreamAttempt;
  /** One attempt of the retry layer on a deployment: `cause` null when it answered. */
  deploymentAttempt?(deployment: string, cause: string | null): void;
  /** A deployment's circuit changed state (0 closed, 1 half-open, 2 open). */
  circuitChanged?(deployment: string, state: 'closed' | 'half-open' | 'open'): void;
  /** limits/call-limiter.ts: the limit counters (Redis) could not be reached. */
  limitsStoreFailed?(): void;
}

/** The installed observers; undefined when off. Written by `installObserver` at start only. */
export const observers: { metrics?: Observer; tracing?: Observer } = {};

export function installObserver(kind: 'metrics' | 'tracing', observer: Observer | undefined): void {
  observers[kind] = observer;
}

const NO_ATTEMPT: UpstreamAttempt = { headers: undefined, end: () => undefined };

/** One attempt handle for both observers (the common case, one or none on, allocates nothing extra). */
export function startUpstreamAttempt(
  provider: string,
  method: string,
  path: string,
  signal: AbortSignal,
): UpstreamAttempt {
  const { metrics, tracing } = observers;
  const first = metrics?.upstreamStarted?.(provider, method, path, signal);
  const second = tracing?.upstreamStarted?.(provider, method, path, signal);
  if (!first || !second) {
    return first ?? second ?? NO_ATTEMPT;
  }
  return {
    headers: second.headers ?? first.headers,
    end(error, cause) {
      first.end(error, cause);
      second.end(error, cause);
    },
  };
}

/** providers/resilience/: one attempt on a deployment ended (`cause` null: it answered). */
export function deploymentAttempted(deployment: string, cause: string | null): void {
  observers.metrics?.deploymentAttempt?.(deployment, cause);
}

/** providers/resilience/: a deployment's circuit is now in `state`. */
export function circuitChanged(deployment: string, state: 'closed' | 'half-open' | 'open'): void {
  observers.metrics?.circuitChanged?.(deployment, state);
}

export function callEnded(outcome: CallOutcome, res: ServerResponse): void {
  observers.metrics?.callEnded?.(outcome, res);
  observers.tracing?.callEnded?.(outcome, res);
}

/** Why an upstream request failed, as a bounded label: from the error's status (our mapping in api-error.ts). */
export function upstreamFailureCause(error: unknown): string {
  const status = (error as { status?: unknown })?.status;
  const upstreamStatus = (error as { upstreamStatus?: unknown })?.upstreamStatus;
  if (status === 499) {
    return 'client_closed';
  }
  if (status === 504) {
    return 'timeout';
  }
  if (typeof upstreamStatus === 'number') {
    return upstreamStatus === 429 ? 'rate_limited' : upstreamStatus >= 500 ? 'status_5xx' : 'status_4xx';
  }
  if (status === 502) {
    return 'unreachable';
  }
  return 'other';
}
