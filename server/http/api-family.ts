/** Which error envelope and request-id headers a path gets: each API family speaks its own wire format. */
import type { ApiFamily } from '../formats/error-envelopes.js';

export function apiFamilyOf(path: string): ApiFamily {
  if (path === '/anthropic' || path.startsWith('/anthropic/')) {
    return 'anthropic';
  }
  if (path === '/v1/mcp' || path.startsWith('/v1/mcp/')) {
    return 'mcp';
  }
  return 'openai';
}
