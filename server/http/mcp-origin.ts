/**
 * The Origin rule of MCP's Streamable HTTP transport (a MUST, against DNS rebinding): a browser page on a
 * foreign site must not drive tools with a key it tricked out of a local setup. A request with an `Origin`
 * whose host is localhost, 127.0.0.1 or [::1] (any port), or that is listed in `OMNIGATE_MCP_ALLOWED_ORIGINS`,
 * passes; so does a request without `Origin` (not a browser: agents, SDKs, curl). Anything else is 403.
 */
import type { Request } from 'express';
import { ApiError } from '../core/api-error.js';

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

export function checkMcpOrigin(req: Request, allowed: readonly string[] = []): void {
  const origin = req.get('origin');
  if (origin === undefined) {
    return;
  }
  let url: URL | undefined;
  try {
    url = new URL(origin);
  } catch {
    url = undefined;
  }
  if (
    url &&
    (url.protocol === 'http:' || url.protocol === 'https:') &&
    (LOCAL_HOSTS.has(url.hostname) || allowed.includes(url.origin))
  ) {
    return;
  }
  throw new ApiError(
    403,
    `Origin ${origin.slice(0, 200)} may not call the MCP endpoint; allow it with OMNIGATE_MCP_ALLOWED_ORIGINS.`,
    { code: 'origin_not_allowed' },
  );
}
