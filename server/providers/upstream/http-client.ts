/**
 * HTTP to one upstream provider: an undici `Pool` per provider (keep-alive, `max_connections` connections),
 * JSON requests with streamed answers (and, through `send`, GETs and raw bodies such as multipart uploads),
 * and every failure mapped to `UpstreamError`. What differs from one
 * provider's API to another's is an `UpstreamProtocol` (see `openai-compatible/http-client.ts`,
 * `anthropic/http-client.ts`).
 *
 * The base URL may carry a path prefix (`http://host:8000/v1`) and a query (Azure's `api-version`); request
 * paths are appended to the prefix. The key is sent only when one is configured, is never logged, and is
 * scrubbed from upstream messages before they can reach a caller. Timeouts (connect, first byte = headers, idle
 * between body pieces; each `timeout_ms` unless configured) become 504, unreachable upstreams 502, and a call aborted because our client went
 * away 499; aborting destroys the upstream connection, so the upstream stops generating (and billing).
 *
 * Connections: a body read to its end gives its connection back to the pool. A consumer that stops reading
 * closes the connection (an abandoned answer must stop generating), unless it first said the answer was
 * complete (`markComplete`): then the little that is left is drained, so the connection is reused.
 */
import { Pool } from 'undici';
import type { Dispatcher } from 'undici';
import type { ProviderConfig } from '../../config.js';
import { ApiError, UpstreamError } from '../../core/api-error.js';
import { startUpstreamAttempt, type UpstreamAttempt } from '../../observability/hooks.js';
import { readJsonBody } from './read-body.js';

/** The part of a provider's configuration that every provider type has. */
export type UpstreamConfig = Pick<
  ProviderConfig,
  'id' | 'base_url' | 'api_key' | 'timeout_ms' | 'max_connections' | 'headers'
> &
  Partial<Pick<ProviderConfig, 'connect_timeout_ms' | 'first_byte_timeout_ms' | 'idle_timeout_ms'>>;

/** What differs from one provider's HTTP API to another's. */
export interface UpstreamProtocol {
  /** The headers that carry the configured key. */
  authHeaders(apiKey: string): Record<string, string>;
  /** Sent on every call unless the configured `headers` name them too. */
  defaultHeaders?: Record<string, string>;
  /** Whether a caller's header (lower-case name) may reach the upstream; transport headers never do. */
  forwardsCallerHeader(name: string): boolean;
  /** Response headers kept besides `content-type` and `retry-after`. */
  extraResponseHeaders?: RegExp;
  /** Masked echoes of a key (`sk-ab***xyz`) that upstream messages carry (global, for `replace`). */
  maskedKey: RegExp;
  /** The fields of a JSON error body that may hold its message as text, in order, after `error.message`. */
  errorBodyFields: readonly string[];
  /** The error for a status this provider gives a meaning of its own; `undefined` for the usual mapping. */
  statusError?(status: number, message: string, retryAfter: string | null): UpstreamError | undefined;
}

export interface UpstreamRequest {
  /** Path below the base URL, e.g. `/chat/completions`. */
  path: string;
  body: unknown;
  signal: AbortSignal;
  /** `application/json` or `text/event-stream`. */
  accept: string;
  /** A query string (without `?`) to add to the base URL's own, e.g. Claude Code's `beta=true`. */
  query?: string;
  /** The caller's headers; the protocol says which may pass, and the configured ones win. */
  headers?: Record<string, string>;
}

/**
 * A request that is not a JSON post: a GET (polling a job, downloading its result) or a body already encoded
 * (multipart). Same headers, errors and abort handling as `post`.
 */
export interface UpstreamSendRequest extends Omit<UpstreamRequest, 'body'> {
  method: 'GET' | 'POST';
  /** The encoded body and its content type; none for a GET. */
  body?: { data: Uint8Array; contentType: string };
}

/** A 2xx upstream answer whose body has not been read yet. */
export interface UpstreamResponse {
  status: number;
  /** `content-type`, `retry-after` and the protocol's extra response headers. */
  headers: Record<string, string>;
  /** The body bytes; transport failures while reading are thrown as `ApiError`/`UpstreamError`. */
  body: AsyncIterable<Uint8Array>;
  /**
   * Says the answer is complete. A consumer that stops reading afterwards lets the rest of the body be
   * drained so the connection is reused; one that stops before closes the connection.
   */
  markComplete(): void;
}

export interface UpstreamHttpClient {
  /** Sends the request; throws `UpstreamError` for non-2xx answers (after reading their error body). */
  post(request: UpstreamRequest): Promise<UpstreamResponse>;
  /** Sends the request and parses the JSON answer. */
  postJson(request: Omit<UpstreamRequest, 'accept'>): Promise<unknown>;
  /** Any method with a body already encoded, or none; throws like `post`. */
  send(request: UpstreamSendRequest): Promise<UpstreamResponse>;
  close(): Promise<void>;
}

/** Caller headers that belong to the transport. `accept-encoding` too: passthrough relays bytes undecoded. */
const TRANSPORT_HEADERS = new Set([
  'host',
  'content-length',
  'content-type',
  'content-encoding',
  'accept-encoding',
  'connection',
  'transfer-encoding',
]);
const KEPT_RESPONSE_HEADERS = new Set(['content-type', 'retry-after']);
const MAX_ERROR_BODY_BYTES = 64 * 1024;
/** undici's read-ahead buffer (64 KiB) plus the little that may follow the end of an answer. */
const DRAIN_LIMIT_BYTES = 80 * 1024;
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

function ignoreAbandonedBodyError(): void {
  // See `post`: nobody is left to tell.
}

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
    // A body cut short at the size limit emits an abort error on destroy, which nobody reads.
    body.on('error', ignoreAbandonedBodyError);
    body.destroy();
  }
  return Buffer.concat(pieces).toString('utf8').slice(0, MAX_ERROR_BODY_BYTES);
}

/** The human-readable message of an upstream error body: `error.message`, else the first text of `fields`. */
export function errorBodyMessage(text: string, fields: readonly string[]): string {
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object') {
      const record = parsed as Record<string, unknown>;
      const { error } = record;
      if (error && typeof error === 'object' && typeof (error as { message?: unknown }).message === 'string') {
        return (error as { message: string }).message;
      }
      for (const field of fields) {
        const candidate = record[field];
        if (typeof candidate === 'string') {
          return candidate;
        }
      }
      // FastAPI-based servers (vLLM, …) put a list of validation errors in `detail`: still better than the body.
      if (fields.includes('detail') && record.detail !== undefined) {
        return JSON.stringify(record.detail);
      }
    }
  } catch {
    // Not JSON: use the text itself.
  }
  return text.trim();
}

export function createUpstreamHttpClient(config: UpstreamConfig, protocol: UpstreamProtocol): UpstreamHttpClient {
  const base = new URL(config.base_url);
  const prefix = base.pathname.replace(/\/+$/, '');
  const connectMs = config.connect_timeout_ms ?? config.timeout_ms;
  const firstByteMs = config.first_byte_timeout_ms ?? config.timeout_ms;
  const idleMs = config.idle_timeout_ms ?? config.timeout_ms;
  const pool = new Pool(base.origin, {
    connections: config.max_connections,
    // Three clocks, each `timeout_ms` unless set: an upstream that accepts no connection, one that never
    // starts answering, and one whose answer stalls between two pieces (a stream stuck mid-way).
    headersTimeout: firstByteMs,
    bodyTimeout: idleMs,
    connectTimeout: connectMs,
  });
  const configuredHeaders: Record<string, string> = { ...protocol.defaultHeaders };
  for (const [name, value] of Object.entries(config.headers)) {
    configuredHeaders[name.toLowerCase()] = value;
  }
  if (config.api_key) {
    Object.assign(configuredHeaders, protocol.authHeaders(config.api_key));
  }

  function scrub(message: string): string {
    const unkeyed = config.api_key ? message.split(config.api_key).join('[redacted]') : message;
    // Even a masked echo of a key stays ours.
    return unkeyed.replace(protocol.maskedKey, '[redacted]');
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
      const what =
        code === 'UND_ERR_CONNECT_TIMEOUT'
          ? `accepted no connection within ${connectMs} ms`
          : code === 'UND_ERR_HEADERS_TIMEOUT'
            ? `did not start answering within ${firstByteMs} ms`
            : `sent nothing for ${idleMs} ms`;
      return new UpstreamError(config.id, 504, null, `Upstream ${config.id} ${what}`, { cause: error });
    }
    const reason = typeof code === 'string' ? code : scrub((error as Error)?.message ?? 'unknown error');
    return new UpstreamError(config.id, 502, null, `Upstream ${config.id} could not be reached (${reason})`, {
      cause: error,
    });
  }

  function requestPath(path: string, query?: string): string {
    const search = new URLSearchParams(base.search);
    for (const [name, value] of new URLSearchParams(query ?? '')) {
      search.append(name, value);
    }
    const text = search.toString();
    return `${prefix}${path}${text ? `?${text}` : ''}`;
  }

  function requestHeaders(
    request: Pick<UpstreamRequest, 'headers' | 'accept'>,
    contentType: string | undefined,
  ): Record<string, string> {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers ?? {})) {
      const lower = name.toLowerCase();
      if (!TRANSPORT_HEADERS.has(lower) && protocol.forwardsCallerHeader(lower)) {
        headers[lower] = value;
      }
    }
    return Object.assign(headers, configuredHeaders, contentType ? { 'content-type': contentType } : {}, {
      accept: request.accept,
    });
  }

  function keptHeaders(headers: Dispatcher.ResponseData['headers']): Record<string, string> {
    const kept: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) {
      const text = headerValue(value);
      if (text !== undefined && (KEPT_RESPONSE_HEADERS.has(name) || protocol.extraResponseHeaders?.test(name))) {
        kept[name] = text;
      }
    }
    return kept;
  }

  async function* guardedBody(
    body: Dispatcher.ResponseData['body'],
    signal: AbortSignal,
    state: { complete: boolean },
    attempt: UpstreamAttempt,
  ): AsyncGenerator<Uint8Array> {
    let bytes = 0;
    let failure: unknown;
    try {
      // `destroyOnReturn: false`: leaving the loop early must not destroy the body before `finally` decides.
      for await (const piece of body.iterator({ destroyOnReturn: false })) {
        bytes += (piece as Uint8Array).byteLength;
        yield piece as Uint8Array;
      }
    } catch (error) {
      failure = transportError(error, signal);
      throw failure;
    } finally {
      attempt.end(failure, failure === undefined || signal.aborted ? undefined : 'body_interrupted');
      if (!body.destroyed) {
        if (state.complete && !signal.aborted) {
          // Stopped right after the answer was complete, with only the end of the body left: read that rest
          // so the connection goes back to the pool (past the limit, the connection is closed instead).
          body.dump({ limit: bytes + DRAIN_LIMIT_BYTES }).catch(() => undefined);
        } else {
          // Abandoned mid-answer: closing the connection makes the upstream stop generating.
          body.destroy();
        }
      }
    }
  }

  async function send(request: UpstreamSendRequest): Promise<UpstreamResponse> {
    // Metrics and traces of this request (observability/hooks.ts): a shared no-op when both are off.
    const attempt = startUpstreamAttempt(config.id, request.method, request.path, request.signal);
    const headers = requestHeaders(request, request.body?.contentType);
    if (attempt.headers) {
      Object.assign(headers, attempt.headers);
    }
    let response: Dispatcher.ResponseData;
    try {
      response = await pool.request({
        method: request.method,
        path: requestPath(request.path, request.query),
        headers,
        body: request.body?.data ?? null,
        signal: request.signal,
      });
    } catch (error) {
      const failure = transportError(error, request.signal);
      attempt.end(failure);
      throw failure;
    }
    const { statusCode, body } = response;
    if (statusCode < 200 || statusCode >= 300) {
      const message = scrub(errorBodyMessage(await readErrorBody(body), protocol.errorBodyFields));
      const retryAfter = headerValue(response.headers['retry-after']) ?? null;
      const failure =
        protocol.statusError?.(statusCode, message, retryAfter) ??
        UpstreamError.fromStatus(config.id, statusCode, message, retryAfter);
      attempt.end(failure);
      throw failure;
    }
    // A body's failures reach its reader through iteration (`guardedBody`). This listener is for the bodies
    // nobody iterates: one not read yet when the call is aborted, and one abandoned mid-answer, whose
    // `destroy()` emits an abort error. Without it that 'error' is unhandled and ends the process.
    body.on('error', ignoreAbandonedBodyError);
    const state = { complete: false };
    return {
      status: statusCode,
      headers: keptHeaders(response.headers),
      body: guardedBody(body, request.signal, state, attempt),
      markComplete: () => {
        state.complete = true;
      },
    };
  }

  function post(request: UpstreamRequest): Promise<UpstreamResponse> {
    const data = Buffer.from(JSON.stringify(request.body), 'utf8');
    // Built field by field, not as `{ ...request, method, body }`: in Node 20's V8 a spread followed by more
    // properties leaves most results with a hidden class of their own, and every read of them in `send` then
    // misses the inline caches (bench/README.md, fifth pass).
    return send({
      method: 'POST',
      path: request.path,
      query: request.query,
      headers: request.headers,
      accept: request.accept,
      signal: request.signal,
      body: { data, contentType: 'application/json' },
    });
  }

  async function postJson(request: Omit<UpstreamRequest, 'accept'>): Promise<unknown> {
    return readJsonBody(config.id, await post({ ...request, accept: 'application/json' }));
  }

  return { post, postJson, send, close: () => pool.close() };
}
