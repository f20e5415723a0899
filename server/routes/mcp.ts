/**
 * `/v1/mcp` methods that are refused for good: the MCP endpoint is stateless by design (no sessions, no
 * standalone stream), so GET and DELETE answer 405 `Allow: POST`, as the contract says, whatever the state
 * of POST.
 */
import { ApiError } from '../core/api-error.js';
import type { Handlers } from '../http/operation-types.js';

function postOnly(): never {
  throw new ApiError(405, 'Method not allowed: the MCP endpoint keeps no sessions; send JSON-RPC messages with POST.', {
    code: 'method_not_allowed',
    headers: { allow: 'POST' },
  });
}

export function mcpSessionHandlers(): Pick<Handlers, 'mcpGet' | 'mcpDelete'> {
  return { mcpGet: postOnly, mcpDelete: postOnly };
}
