/**
 * The error envelope of each API family, the one shape its official SDK parses:
 * `/v1/*` → OpenAI `{error: {message, type, param, code}}`; `/anthropic/*` → Anthropic
 * `{type: "error", error: {type, message}, request_id}`; `/v1/mcp` → a JSON-RPC 2.0 error, a 401 or 429 too: those
 * come before any JSON-RPC is read (id null), but MCP clients parse only JSON-RPC. The error handler renders
 * whole answers with these, and each dialect's stream-failure encoder renders its error event with them.
 */
import type { ApiError } from '../core/api-error.js';

export type ApiFamily = 'openai' | 'anthropic' | 'mcp';

export function openAiErrorEnvelope(error: ApiError) {
  return { error: { message: error.message, type: error.type, param: error.param, code: error.code } };
}

const ANTHROPIC_TYPE_BY_STATUS = new Map<number, string>([
  [401, 'authentication_error'],
  [403, 'permission_error'],
  [404, 'not_found_error'],
  [413, 'request_too_large'],
  [429, 'rate_limit_error'],
  [502, 'api_error'],
  [503, 'overloaded_error'],
  [504, 'timeout_error'],
]);

function anthropicErrorType(status: number): string {
  return ANTHROPIC_TYPE_BY_STATUS.get(status) ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}

/**
 * A spent budget (OpenAI's `insufficient_quota`) is Anthropic's `billing_error`, the type its SDK names for a
 * balance that cannot pay; the 429 keeps `x-should-retry: false`, which the Anthropic SDK obeys too.
 */
export function anthropicErrorEnvelope(error: ApiError, requestId: string | null) {
  return {
    type: 'error' as const,
    error: {
      type: error.type === 'insufficient_quota' ? 'billing_error' : anthropicErrorType(error.status),
      message: error.message,
    },
    request_id: requestId,
  };
}

/** The JSON-RPC code for an HTTP failure on the MCP endpoint. */
function jsonRpcCode(status: number, code: string | null): number {
  if (code === 'invalid_json') {
    return -32700; // JSON-RPC's "Parse error": the body could not be read as JSON at all
  }
  if (status === 400) {
    return -32600;
  }
  if (status === 404 || status === 405) {
    return -32601;
  }
  return status >= 500 ? -32603 : -32000;
}

/** `rpcId` is the id of the request being answered (null when it could not be read). */
function jsonRpcErrorEnvelope(error: ApiError, rpcId: string | number | null) {
  return {
    jsonrpc: '2.0' as const,
    id: rpcId,
    error: { code: jsonRpcCode(error.status, error.code), message: error.message },
  };
}

export function errorEnvelope(
  error: ApiError,
  family: ApiFamily,
  requestId: string | null,
  rpcId: string | number | null = null,
): unknown {
  if (family === 'anthropic') {
    return anthropicErrorEnvelope(error, requestId);
  }
  if (family === 'mcp') {
    return jsonRpcErrorEnvelope(error, rpcId);
  }
  return openAiErrorEnvelope(error);
}
