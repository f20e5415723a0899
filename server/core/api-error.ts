/**
 * The one error type the server throws. `error-handler.ts` is the only place that renders it, in the
 * envelope of the API family the request belongs to. Handlers and providers throw; they never format.
 */

/** OpenAI-family error types; the Anthropic family maps them in `error-handler.ts`. */
export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'conflict_error'
  | 'request_too_large'
  | 'rate_limit_error'
  /** 429 when a spend budget is used up: OpenAI's type for it (its SDK does not retry it, with `x-should-retry: false`). */
  | 'insufficient_quota'
  | 'server_error'
  | 'upstream_error'
  | 'service_unavailable_error'
  | 'timeout_error';

const TYPE_BY_STATUS: Record<number, ErrorType> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  405: 'invalid_request_error',
  406: 'invalid_request_error',
  409: 'conflict_error',
  413: 'request_too_large',
  415: 'invalid_request_error',
  422: 'invalid_request_error',
  429: 'rate_limit_error',
  500: 'server_error',
  502: 'upstream_error',
  503: 'service_unavailable_error',
  504: 'timeout_error',
};

export function errorTypeForStatus(status: number): ErrorType {
  return TYPE_BY_STATUS[status] ?? (status >= 500 ? 'server_error' : 'invalid_request_error');
}

export interface ApiErrorOptions {
  type?: ErrorType;
  code?: string | null;
  param?: string | null;
  /** Extra response headers, e.g. Retry-After. */
  headers?: Record<string, string>;
  cause?: unknown;
  /**
   * False when repeating the call cannot help (a capability this build does not serve): the answer says so
   * with `x-should-retry: false`, which the official SDKs obey instead of retrying a 5xx twice.
   */
  retryable?: boolean;
  /** A 5xx that is a known state rather than a fault (shutting down, not served): logged at info, no stack. */
  expected?: boolean;
}

export class ApiError extends Error {
  readonly status: number;
  readonly type: ErrorType;
  readonly code: string | null;
  readonly param: string | null;
  readonly headers: Record<string, string>;
  /** A 4xx is the caller's mistake and is logged at info; anything else is logged as an error. */
  get expected(): boolean {
    return this.status < 500 || this.knownState;
  }
  readonly retryable: boolean | undefined;
  private readonly knownState: boolean;

  constructor(status: number, message: string, options: ApiErrorOptions = {}) {
    super(message, { cause: options.cause });
    this.name = 'ApiError';
    this.status = status;
    this.type = options.type ?? errorTypeForStatus(status);
    this.code = options.code ?? null;
    this.param = options.param ?? null;
    this.headers = options.headers ?? {};
    this.retryable = options.retryable;
    this.knownState = options.expected ?? false;
  }
}

/** A failure of an upstream provider, already mapped to the status Omnigate answers with. */
export class UpstreamError extends ApiError {
  readonly upstreamStatus: number | null;
  readonly provider: string;

  constructor(
    provider: string,
    status: number,
    upstreamStatus: number | null,
    message: string,
    options: ApiErrorOptions = {},
  ) {
    super(status, message, {
      code: status === 504 ? 'upstream_timeout' : status === 429 ? 'rate_limit_exceeded' : 'upstream_error',
      ...options,
    });
    this.name = 'UpstreamError';
    this.provider = provider;
    this.upstreamStatus = upstreamStatus;
  }

  /**
   * Maps an upstream HTTP status to ours: the upstream rejecting *our* key is not the caller's fault (502),
   * rate limits pass through as 429 with their Retry-After, everything else upstream-side is a 502.
   */
  static fromStatus(
    provider: string,
    upstreamStatus: number,
    upstreamMessage: string,
    retryAfter?: string | null,
  ): UpstreamError {
    const detail = upstreamMessage ? `: ${upstreamMessage.slice(0, 500)}` : '';
    if (upstreamStatus === 429) {
      return new UpstreamError(provider, 429, 429, `Upstream ${provider} is rate limited${detail}`, {
        headers: retryAfter ? { 'retry-after': retryAfter } : {},
      });
    }
    if (upstreamStatus === 401 || upstreamStatus === 403) {
      return new UpstreamError(
        provider,
        502,
        upstreamStatus,
        `Upstream ${provider} rejected the gateway's credentials (${upstreamStatus})${detail}`,
      );
    }
    if (upstreamStatus === 404) {
      return new UpstreamError(
        provider,
        502,
        404,
        `Upstream ${provider} does not know this model or endpoint (404)${detail}`,
      );
    }
    if (upstreamStatus === 400 || upstreamStatus === 422) {
      // The caller's request was valid for our contract but the upstream refused it: keep it a 400 so the
      // caller sees the upstream's reason and does not retry.
      return new UpstreamError(
        provider,
        400,
        upstreamStatus,
        `Upstream ${provider} rejected the request (${upstreamStatus})${detail}`,
        {
          type: 'invalid_request_error',
          code: 'upstream_rejected',
        },
      );
    }
    if (upstreamStatus === 408 || upstreamStatus === 504) {
      return new UpstreamError(
        provider,
        504,
        upstreamStatus,
        `Upstream ${provider} timed out (${upstreamStatus})${detail}`,
      );
    }
    return new UpstreamError(provider, 502, upstreamStatus, `Upstream ${provider} failed (${upstreamStatus})${detail}`);
  }
}
