/**
 * HTTP to one OpenAI-compatible upstream: an undici `Pool` per provider (keep-alive, `max_connections`
 * connections), JSON requests with streamed answers, and every failure mapped to `UpstreamError`.
 *
 * The base URL may carry a path prefix (`http://host:8000/v1`) and a query (Azure's `api-version`); request
 * paths are appended to the prefix. `Authorization: Bearer <api_key>` is sent only when a key is configured;
 * the key is never logged and is scrubbed from upstream error messages before they reach the caller.
 * Timeouts (`headersTimeout`/`bodyTimeout` = `timeout_ms`) become 504, unreachable upstreams 502, and an
 * aborted call (our client went away) 499; aborting destroys the upstream connection so it stops generating.
 */
import { Pool } from 'undici';
import type { Dispatcher } from 'undici';
import { ApiError, UpstreamError } from '../../http/api-error.js';
import type { ProviderConfig } from '../../config.js';

export type OpenAICompatibleConfig = Extract<ProviderConfig, { type: 'openai-compatible' }>;

export interface UpstreamRequest {
  /** Path below the base URL, e.g. `/chat/completions`. */
  path: string;
  body: unknown;
  signal: AbortSignal;
  /** `application/json` or `text/event-stream`. */
  accept: string;
  /** A query string (without `?`) to add to the base URL's own. */
  query?: string;
  /** Extra headers for this call; they cannot replace authorization or the content headers. */
  headers?: Record<string, string>;
}

/** A 2xx upstream answer whose body has not been read yet. */
export interface UpstreamResponse {
  status: number;
  headers: Record<string, string>;
  /** The body bytes; transport failures while reading are thrown as `UpstreamError`. */
  body: AsyncIterable<Uint8Array>;
}

export interface UpstreamHttpClient {
  /** Sends the request; throws `UpstreamError` for non-2xx answers (after reading their error body). */
  post(request: UpstreamRequest): Promise<UpstreamResponse>;
  /** Sends the request and parses the JSON answer. */
  postJson(request: Omit<UpstreamRequest, 'accept'>): Promise<unknown>;
  close(): Promise<void>;
}

/** Headers a call may not set: they belong to the transport or to the provider's configuration. */
// `accept-encoding` too: passthrough bodies are relayed as bytes without their content-encoding.
const RESERVED_HEADERS = new Set(['authorization', 'host', 'content-length', 'content-type', 'content-encoding', 'accept-encoding', 'connection', 'transfer-encoding']);
const MAX_ERROR_BODY_BYTES = 64 * 1024;
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

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

/** The human-readable message of an upstream error body in any of the shapes servers use. */
export function upstreamErrorMessage(text: string): string {
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object') {
      const { error, message, detail } = parsed as { error?: unknown; message?: unknown; detail?: unknown };
      if (error && typeof error === 'object' && typeof (error as { message?: unknown }).message === 'string') {
        return (error as { message: string }).message;
      }
      for (const candidate of [error, message, detail]) {
        if (typeof candidate === 'string') {
          return candidate;
        }
      }
      if (detail !== undefined) {
        return JSON.stringify(detail);
      }
    }
  } catch {
    // Not JSON: use the text itself.
  }
  return text.trim();
}

export function createUpstreamHttpClient(config: OpenAICompatibleConfig): UpstreamHttpClient {
  const base = new URL(config.base_url);
  const prefix = base.pathname.replace(/\/+$/, '');
  const pool = new Pool(base.origin, {
    connections: config.max_connections,
    headersTimeout: config.timeout_ms,
    bodyTimeout: config.timeout_ms,
    connectTimeout: config.timeout_ms,
  });
  const configuredHeaders: Record<string, string> = {};
  for (const [name, value] of Object.entries(config.headers)) {
    configuredHeaders[name.toLowerCase()] = value;
  }
  if (config.api_key) {
    configuredHeaders.authorization = `Bearer ${config.api_key}`;
  }

  function scrub(message: string): string {
    let scrubbed = message;
    if (config.api_key) {
      scrubbed = scrubbed.split(config.api_key).join('[redacted]');
    }
    // OpenAI echoes a masked key ("Incorrect API key provided: sk-ab***xyz"); even masked, it stays ours.
    return scrubbed.replace(/\b(?:sk|rk|pk)-[A-Za-z0-9_*.-]{4,}/g, '[redacted]');
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
    const reason = typeof code === 'string' ? code : (error as Error)?.message ?? 'unknown error';
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

  async function* guardedBody(body: Dispatcher.ResponseData['body'], signal: AbortSignal): AsyncGenerator<Uint8Array> {
    try {
      for await (const piece of body) {
        yield piece as Uint8Array;
      }
    } catch (error) {
      throw transportError(error, signal);
    } finally {
      // An early return (our consumer stopped) must close the upstream connection too.
      if (!body.destroyed) {
        body.destroy();
      }
    }
  }

  async function post(request: UpstreamRequest): Promise<UpstreamResponse> {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers ?? {})) {
      if (!RESERVED_HEADERS.has(name.toLowerCase())) {
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
      throw UpstreamError.fromStatus(config.id, statusCode, scrub(upstreamErrorMessage(text)), headerValue(response.headers['retry-after']) ?? null);
    }
    const kept: Record<string, string> = {};
    for (const name of ['content-type', 'retry-after']) {
      const value = headerValue(response.headers[name]);
      if (value !== undefined) {
        kept[name] = value;
      }
    }
    return { status: statusCode, headers: kept, body: guardedBody(body, request.signal) };
  }

  async function postJson(request: Omit<UpstreamRequest, 'accept'>): Promise<unknown> {
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

  return {
    post,
    postJson,
    close: () => pool.close(),
  };
}
