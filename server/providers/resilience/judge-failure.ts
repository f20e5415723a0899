/**
 * What one failed attempt means for the next: retried (on this deployment or another), counted against the
 * deployment's circuit, or handed to the caller as it is. Retrying fixes what is the upstream's moment (a
 * connection refused or reset, a timeout, a 429, a 5xx, an answer that would not parse); it cannot fix what is
 * the request's (400, 404, a content filter) or our credentials' (401, 403), so those go to the caller at once.
 */
import { ApiError, UpstreamError } from '../../core/api-error.js';

export interface FailureVerdict {
  /** Another attempt may succeed. */
  retry: boolean;
  /** The deployment misbehaved (counts towards opening its circuit). */
  againstDeployment: boolean;
  /** The input does not fit the model's context window: `context_window_fallbacks` may take it. */
  contextWindow: boolean;
  /** A bounded label for logs and metrics. */
  cause: string;
  /** The upstream's `Retry-After`, in ms, when it sent one. */
  retryAfterMs?: number;
}

const CONTEXT_WINDOW =
  /context[ _-]?(length|window)|maximum context|prompt is too long|too many (input )?tokens|input is too long|reduce the length/i;

/** `Retry-After` as seconds or an HTTP date, in ms from now; undefined when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) {
    return undefined;
  }
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) {
    return Math.round(seconds * 1000);
  }
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

const NOT_RETRIED = (cause: string): FailureVerdict => ({
  retry: false,
  againstDeployment: false,
  contextWindow: false,
  cause,
});

export function judgeFailure(error: unknown, callerSignal: AbortSignal): FailureVerdict {
  if (callerSignal.aborted) {
    return NOT_RETRIED('client_closed');
  }
  if (!(error instanceof ApiError)) {
    // A bug of ours (a TypeError in a decoder) is no upstream's fault and would fail again.
    return NOT_RETRIED('other');
  }
  const upstreamStatus = error instanceof UpstreamError ? error.upstreamStatus : null;
  if (error.status === 429) {
    return {
      retry: true,
      againstDeployment: true,
      contextWindow: false,
      cause: 'rate_limited',
      retryAfterMs: retryAfterMs(error.headers['retry-after']),
    };
  }
  if (error.status === 504) {
    return { retry: true, againstDeployment: true, contextWindow: false, cause: 'timeout' };
  }
  if (error instanceof UpstreamError && error.status === 400 && CONTEXT_WINDOW.test(error.message)) {
    return { retry: false, againstDeployment: false, contextWindow: true, cause: 'context_window' };
  }
  if (upstreamStatus === 401 || upstreamStatus === 403 || upstreamStatus === 404) {
    return NOT_RETRIED('status_4xx');
  }
  if (error.status === 502 || error.status === 503) {
    const cause =
      upstreamStatus === null
        ? 'unreachable'
        : upstreamStatus >= 200 && upstreamStatus < 300
          ? 'invalid_response'
          : 'status_5xx';
    return { retry: true, againstDeployment: true, contextWindow: false, cause };
  }
  return NOT_RETRIED(error.status >= 500 ? 'status_5xx' : 'status_4xx');
}
