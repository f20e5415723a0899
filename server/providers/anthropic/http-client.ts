/**
 * HTTP to the Anthropic API (or an Anthropic-compatible gateway): one undici `Pool` per provider (keep-alive,
 * `max_connections` connections), JSON requests with streamed answers, every failure mapped to `UpstreamError`.
 *
 * Headers: `x-api-key: <api_key>` (only when a key is configured), `anthropic-version` from config, then the
 * configured `headers`. A call may add `anthropic-beta` (the caller's, for passthrough) and nothing else: the
 * caller's own credentials and transport headers never reach the upstream.
 *
 * Failures: non-2xx answers go through `UpstreamError.fromStatus` with the message of Anthropic's error body
 * (`{"type":"error","error":{"type","message"}}`), except Anthropic's own `529 overloaded_error`, which becomes
 * 503 (the upstream is busy, not broken). Timeouts (`headersTimeout`/`bodyTimeout`/connect = `timeout_ms`)
 * become 504, unreachable upstreams 502, and a call aborted because our client went away 499; aborting destroys
 * the upstream connection, so Anthropic stops generating (and billing). The key is never logged, and is
 * scrubbed from any upstream message before it can reach a caller.
 */
import { Pool } from 'undici';
import type { Dispatcher } from 'undici';
import type { ProviderConfig } from '../../config.js';
import { ApiError, UpstreamError } from '../../http/api-error.js';

export type AnthropicConfig = Extract<ProviderConfig, { type: 'anthropic' }>;

export interface AnthropicRequest {
  /** Path below the base URL: `/v1/messages` or `/v1/messages/count_tokens`. */
  path: string;
  body: unknown;
  signal: AbortSignal;
  /** `application/json` or `text/event-stream`. */
  accept: string;
  /** A query string (without `?`), e.g. Claude Code's `beta=true`. */
  query?: string;
  /** Caller headers; only `anthropic-beta` is forwarded. */
  headers?: Record<string, string>;
}

/** A 2xx answer whose body has not been read yet. */
export interface AnthropicResponse {
  status: number;
  /** `content-type`, `retry-after` and Anthropic's `anthropic-ratelimit-*` headers. */
  headers: Record<string, string>;
  /** The body bytes; transport failures while reading are thrown as `ApiError`/`UpstreamError`. */
  body: AsyncIterable<Uint8Array>;
  /**
   * Says the answer is complete. A consumer that stops reading afterwards lets the rest of the body be
   * drained so the connection is reused; one that stops before closes the connection.
   */
  markComplete(): void;
}

export interface AnthropicHttpClient {
  /** Sends the request; throws `UpstreamError` for non-2xx answers (after reading their error body). */
  post(request: AnthropicRequest): Promise<AnthropicResponse>;
  /** Sends the request and parses the JSON answer. */
  postJson(request: Omit<AnthropicRequest, 'accept'>): Promise<unknown>;
  close(): Promise<void>;
}

/** Caller headers that may be forwarded. */
const FORWARDED_HEADERS = new Set(['anthropic-beta']);
const KEPT_RESPONSE_HEADER = /^(content-type|retry-after|anthropic-ratelimit-.+)$/;
const MAX_ERROR_BODY_BYTES = 64 * 1024;
/** undici's read-ahead buffer (64 KiB) plus the little that may follow `message_stop`. */
const DRAIN_LIMIT_BYTES = 80 * 1024;
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);
/** Anthropic's "overloaded" status (https://docs.anthropic.com/en/api/errors). */
const OVERLOADED_STATUS = 529;

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

async function readErrorBody(body: Dispatcher.ResponseData['body']): Promise<string> {
  const pieces: Buffer[] = [];
  let size = 0;
  try {
    for await (const piece of body) {
      const buffer = Buffer.from(piece as Uint8Array);
      pieces.push(buffer);
      size += buffer.length;
      if (size >= MAX_ERROR_BODY_BYTES) {
        break;
      }
    }
  } catch {
    // The status already says what went wrong; a broken error body adds nothing.
  } finally {
    body.destroy();
  }
  return Buffer.concat(pieces).toString('utf8').slice(0, MAX_ERROR_BODY_BYTES);
}

/** The message of Anthropic's error envelope, or of the other shapes gateways in front of it use. */
export function anthropicErrorMessage(text: string): string {
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object') {
      const { error, message } = parsed as { error?: unknown; message?: unknown };
      if (error && typeof error === 'object' && typeof (error as { message?: unknown }).message === 'string') {
        return (error as { message: string }).message;
      }
      for (const candidate of [error, message]) {
        if (typeof candidate === 'string') {
          return candidate;
        }
      }
    }
  } catch {
    // Not JSON: use the text itself.
  }
  return text.trim();
}

export function createAnthropicHttpClient(config: AnthropicConfig): AnthropicHttpClient {
  const base = new URL(config.base_url);
  const prefix = base.pathname.replace(/\/+$/, '');
  const pool = new Pool(base.origin, {
    connections: config.max_connections,
    headersTimeout: config.timeout_ms,
    bodyTimeout: config.timeout_ms,
    connectTimeout: config.timeout_ms,
  });
  const configuredHeaders: Record<string, string> = { 'anthropic-version': config.anthropic_version };
  for (const [name, value] of Object.entries(config.headers)) {
    configuredHeaders[name.toLowerCase()] = value;
  }
  if (config.api_key) {
    configuredHeaders['x-api-key'] = config.api_key;
  }

  function scrub(message: string): string {
    let scrubbed = message;
    if (config.api_key) {
      scrubbed = scrubbed.split(config.api_key).join('[redacted]');
    }
    // Even a masked echo of a key stays ours.
    return scrubbed.replace(/\bsk-ant-[A-Za-z0-9_*.-]{4,}/g, '[redacted]');
  }

  function statusError(status: number, text: string, retryAfter: string | null): UpstreamError {
    const message = scrub(anthropicErrorMessage(text));
    if (status === OVERLOADED_STATUS) {
      const detail = message ? `: ${message.slice(0, 500)}` : '';
      return new UpstreamError(config.id, 503, status, `Upstream ${config.id} is overloaded (${status})${detail}`, {
        headers: retryAfter ? { 'retry-after': retryAfter } : {},
      });
    }
    return UpstreamError.fromStatus(config.id, status, message, retryAfter);
  }

  function transportError(error: unknown, signal: AbortSignal): ApiError {
    if (error instanceof ApiError) {
      return error;
    }
    if (signal.aborted) {
      return new ApiError(499, 'The client closed the request.', { code: 'client_closed_request', cause: error });
    }
    const code = (error as { code?: unknown })?.code;
    if (typeof code === 'string' && TIMEOUT_CODES.has(code)) {
      return new UpstreamError(config.id, 504, null, `Upstream ${config.id} did not answer within ${config.timeout_ms} ms`, { cause: error });
    }
    const reason = typeof code === 'string' ? code : scrub((error as Error)?.message ?? 'unknown error');
    return new UpstreamError(config.id, 502, null, `Upstream ${config.id} could not be reached (${reason})`, { cause: error });
  }

  function requestPath(path: string, query?: string): string {
    const search = new URLSearchParams(base.search);
    for (const [name, value] of new URLSearchParams(query ?? '')) {
      search.append(name, value);
    }
    const text = search.toString();
    return `${prefix}${path}${text ? `?${text}` : ''}`;
  }

  async function* guardedBody(body: Dispatcher.ResponseData['body'], signal: AbortSignal, state: { complete: boolean }): AsyncGenerator<Uint8Array> {
    let bytes = 0;
    try {
      // `destroyOnReturn: false`: leaving the loop early must not destroy the body before `finally` decides.
      for await (const piece of body.iterator({ destroyOnReturn: false })) {
        bytes += (piece as Uint8Array).byteLength;
        yield piece as Uint8Array;
      }
    } catch (error) {
      throw transportError(error, signal);
    } finally {
      if (!body.destroyed) {
        if (state.complete && !signal.aborted) {
          // Stopped right after the answer was complete (`message_stop`), with only the end of the body
          // left: read that rest so the connection goes back to the pool.
          body.dump({ limit: bytes + DRAIN_LIMIT_BYTES }).catch(() => undefined);
        } else {
          // Abandoned mid-answer: closing the connection makes Anthropic stop generating.
          body.destroy();
        }
      }
    }
  }

  async function post(request: AnthropicRequest): Promise<AnthropicResponse> {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers ?? {})) {
      if (FORWARDED_HEADERS.has(name.toLowerCase())) {
        headers[name.toLowerCase()] = value;
      }
    }
    Object.assign(headers, configuredHeaders, { 'content-type': 'application/json', accept: request.accept });
    let response: Dispatcher.ResponseData;
    try {
      response = await pool.request({
        method: 'POST',
        path: requestPath(request.path, request.query),
        headers,
        body: JSON.stringify(request.body),
        signal: request.signal,
      });
    } catch (error) {
      throw transportError(error, request.signal);
    }
    const { statusCode, body } = response;
    if (statusCode < 200 || statusCode >= 300) {
      const text = await readErrorBody(body);
      throw statusError(statusCode, text, headerValue(response.headers['retry-after']) ?? null);
    }
    const kept: Record<string, string> = {};
    for (const [name, value] of Object.entries(response.headers)) {
      const text = headerValue(value);
      if (text !== undefined && KEPT_RESPONSE_HEADER.test(name)) {
        kept[name] = text;
      }
    }
    const state = { complete: false };
    return {
      status: statusCode,
      headers: kept,
      body: guardedBody(body, request.signal, state),
      markComplete: () => {
        state.complete = true;
      },
    };
  }

  async function postJson(request: Omit<AnthropicRequest, 'accept'>): Promise<unknown> {
    const response = await post({ ...request, accept: 'application/json' });
    const pieces: Buffer[] = [];
    for await (const piece of response.body) {
      pieces.push(Buffer.from(piece));
    }
    const text = Buffer.concat(pieces).toString('utf8');
    try {
      return JSON.parse(text);
    } catch (error) {
      throw new UpstreamError(config.id, 502, response.status, `Upstream ${config.id} answered with invalid JSON`, { cause: error });
    }
  }

  return { post, postJson, close: () => pool.close() };
}
