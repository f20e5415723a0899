/**
 * `/v1/mcp`: the Model Context Protocol endpoint, Streamable HTTP, stateless, served by the official v2 SDK
 * (`createMcpHandler`: 2026-07-28 natively and every 2025 revision through its stateless fallback, from the one
 * factory in mcp-server.ts). Our own bearer auth has already run (401 in the OpenAI envelope); the Origin rule
 * runs here, first, for every method. GET and DELETE answer 405 `Allow: POST`: no sessions, no standalone
 * stream. A `tools/call` answer's head waits for its first body byte (http/hold-head.ts), so it carries the
 * headers of the call the tool made.
 */
import type { Request, Response } from 'express';
import type { AppDeps } from './app-deps.js';
import { ApiError } from '../core/api-error.js';
import { holdHeadUntilBody } from '../http/hold-head.js';
import { checkMcpOrigin } from '../http/mcp-origin.js';
import type { Handlers } from '../http/operation-types.js';
import { scopeOf } from '../http/call-scope.js';
import type { McpRequestScope } from './mcp-server.js';

function postOnly(): never {
  throw new ApiError(405, 'Method not allowed: the MCP endpoint keeps no sessions; send JSON-RPC messages with POST.', {
    code: 'method_not_allowed',
    headers: { allow: 'POST' },
  });
}

type McpDeps = Pick<
  AppDeps,
  | 'registry'
  | 'mediaPool'
  | 'logger'
  | 'shutdownSignal'
  | 'now'
  | 'media'
  | 'videos'
  | 'files'
  | 'search'
  | 'tools'
  | 'version'
  | 'limiter'
  | 'costOf'
>;

type NodeHandler = (req: Request, res: Response, body: unknown) => Promise<void>;

/**
 * The SDK's handler, made on the first MCP request: the SDK and the tool server weigh ~5 MiB of resident memory
 * and ~5 MiB of live heap (bench/README.md) that a gateway nobody reaches over MCP should not carry.
 */
async function loadMcpHandler(deps: McpDeps): Promise<NodeHandler> {
  const [{ createMcpHandler }, { toNodeHandler }, { buildMcpServer }] = await Promise.all([
    import('@modelcontextprotocol/server'),
    import('@modelcontextprotocol/node'),
    import('./mcp-server.js'),
  ]);
  const handler = createMcpHandler(
    (context) => buildMcpServer(deps, (context.authInfo!.extra as { request: McpRequestScope }).request),
    { onerror: (error) => deps.logger.debug({ err: error }, 'MCP request refused') },
  );
  return toNodeHandler(handler, { onerror: (error) => deps.logger.error({ err: error }, 'MCP handler failed') });
}

export function mcpHandlers(deps: McpDeps): Pick<Handlers, 'mcpPost' | 'mcpGet' | 'mcpDelete'> {
  const allowed = deps.tools?.mcpAllowedOrigins ?? [];
  let serving: Promise<NodeHandler> | undefined;
  return {
    async mcpPost(req, res) {
      checkMcpOrigin(req as Request, allowed);
      refuseLongBatches(req.body);
      refuseUnrepeatableIds(req.body);
      const scope = scopeOf(res);
      // The SDK hands `auth` to the server factory as `authInfo`; the key was verified by authenticate().
      const request: McpRequestScope = { scope };
      (req as Request & { auth?: unknown }).auth = {
        token: 'verified',
        clientId: scope.key.id,
        scopes: [],
        extra: { request },
      };
      serving ??= loadMcpHandler(deps).catch((error: unknown) => {
        serving = undefined; // the next request tries again
        throw error;
      });
      const handle = await serving;
      // The SDK writes a stream's head before the tools run: held until the first body byte, it carries the
      // headers of the calls made by then (deployment, attempts, rate limits). In a JSON-RPC batch, what a call
      // sets after the first byte went out (another call's result, a progress notification) is not in it.
      holdHeadUntilBody(res);
      await handle(req as Request, res, req.body);
    },
    mcpGet(req) {
      checkMcpOrigin(req as Request, allowed);
      postOnly();
    },
    mcpDelete(req) {
      checkMcpOrigin(req as Request, allowed);
      postOnly();
    },
  };
}

/** The contract's `maxItems` of a JSON-RPC batch (`McpPostBody`): the validator does not read `/v1/mcp` bodies. */
const MAX_BATCH = 100;

function refuseLongBatches(body: unknown): void {
  if (Array.isArray(body) && body.length > MAX_BATCH) {
    throw new ApiError(400, `A JSON-RPC batch holds at most ${MAX_BATCH} messages; this one has ${body.length}.`, {
      code: 'invalid_request',
    });
  }
}

/**
 * JSON-RPC answers repeat the request's id, and the contract (like every MCP client) takes a string or an integer.
 * The SDK would repeat a fraction or a huge number verbatim; such a request is refused here instead, answered
 * with a null id as the spec says for an id that cannot be read.
 */
function refuseUnrepeatableIds(body: unknown): void {
  for (const message of Array.isArray(body) ? body : [body]) {
    const id = (message as { id?: unknown } | null | undefined)?.id;
    if (id !== undefined && id !== null && typeof id !== 'string' && !Number.isSafeInteger(id)) {
      throw new ApiError(400, 'A JSON-RPC id must be a string or an integer.', { code: 'invalid_request' });
    }
  }
}
