/**
 * The one error class the client throws for anything the server reports: a non-2xx answer in any of the
 * three envelopes (OpenAI `/v1/*`, Anthropic `/anthropic/*`, JSON-RPC `/v1/mcp`), an error frame inside a
 * stream, or a failed video task. Network failures are left as the `fetch` errors they are.
 */

export const REQUEST_ID_HEADER = 'x-svc-request-id';

export interface OmnigateErrorFields {
  /** HTTP status; null when the error arrived after a 2xx (a stream's error frame, a failed video task). */
  status: number | null;
  /** The envelope's error class, e.g. `invalid_request_error`, `rate_limit_error`. */
  type: string;
  /** Machine-readable code, e.g. `model_not_found`; null when the envelope has none. */
  code: string | null;
  /** The request field at fault; null when not known. */
  param: string | null;
  message: string;
  /** The `x-svc-request-id` of the call (or the Anthropic body's `request_id`); null if absent. */
  requestId: string | null;
  /** The parsed error body or frame, for anything not lifted into a field. */
  body?: unknown;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringOrNull(value: unknown): string | null {
  if (typeof value === 'string') {
    return value;
  }
  return typeof value === 'number' ? String(value) : null;
}

export class OmnigateError extends Error implements OmnigateErrorFields {
  override readonly name = 'OmnigateError';
  readonly status: number | null;
  readonly type: string;
  readonly code: string | null;
  readonly param: string | null;
  readonly requestId: string | null;
  readonly body: unknown;

  constructor(fields: OmnigateErrorFields) {
    super(fields.message);
    this.status = fields.status;
    this.type = fields.type;
    this.code = fields.code;
    this.param = fields.param;
    this.requestId = fields.requestId;
    this.body = fields.body;
  }

  /**
   * Reads an error envelope (already parsed by openapi-fetch: an object for JSON bodies, else the text)
   * from a non-2xx response.
   */
  static fromResponse(response: Response, body: unknown): OmnigateError {
    const headerRequestId = response.headers.get(REQUEST_ID_HEADER);
    const parsed = parseEnvelope(body);
    return new OmnigateError({
      status: response.status,
      type: parsed?.type ?? 'http_error',
      code: parsed?.code ?? null,
      param: parsed?.param ?? null,
      message: parsed?.message ?? describeUnparsed(response, body),
      requestId: headerRequestId ?? parsed?.requestId ?? null,
      body,
    });
  }

  /** An error frame received inside a stream whose response was 2xx. */
  static fromStreamFrame(frame: unknown, requestId: string | null): OmnigateError {
    const parsed = parseEnvelope(frame) ?? parseFlatError(frame);
    return new OmnigateError({
      status: null,
      type: parsed?.type ?? 'stream_error',
      code: parsed?.code ?? null,
      param: parsed?.param ?? null,
      message: parsed?.message ?? 'The stream reported an error.',
      requestId: requestId ?? parsed?.requestId ?? null,
      body: frame,
    });
  }
}

type ParsedEnvelope = Omit<OmnigateErrorFields, 'status' | 'body' | 'requestId'> & { requestId: string | null };

/**
 * `{error: {message, type, param, code}}` (OpenAI), `{type: 'error', error: {type, message}, request_id}`
 * (Anthropic) or `{jsonrpc: '2.0', error: {code, message}}` (JSON-RPC).
 */
function parseEnvelope(body: unknown): ParsedEnvelope | undefined {
  if (!isRecord(body) || !isRecord(body.error) || typeof body.error.message !== 'string') {
    return undefined;
  }
  const error = body.error;
  if (body.jsonrpc === '2.0') {
    return {
      type: 'jsonrpc_error',
      code: stringOrNull(error.code),
      param: null,
      message: error.message as string,
      requestId: null,
    };
  }
  return {
    type: typeof error.type === 'string' ? error.type : 'api_error',
    code: stringOrNull(error.code),
    param: stringOrNull(error.param),
    message: error.message as string,
    requestId: stringOrNull(body.request_id),
  };
}

/** The Responses API's error event: `{type: 'error', code, message, param}` with no nested object. */
function parseFlatError(frame: unknown): ParsedEnvelope | undefined {
  if (!isRecord(frame) || typeof frame.message !== 'string') {
    return undefined;
  }
  return {
    type: 'stream_error',
    code: stringOrNull(frame.code),
    param: stringOrNull(frame.param),
    message: frame.message,
    requestId: null,
  };
}

function describeUnparsed(response: Response, body: unknown): string {
  const text = typeof body === 'string' ? body.trim().slice(0, 500) : '';
  return text === '' ? `HTTP ${response.status}` : `HTTP ${response.status}: ${text}`;
}
