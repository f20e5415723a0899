/**
 * Answers for requests that match no operation of the contract, in the envelope of their API family.
 *
 * express-openapi-validator answers unknown paths and methods itself, except under `/v1/mcp`, which it is told
 * to leave alone (JSON-RPC bodies are not its to judge). There, Express would answer an unknown method or
 * sub-path with an HTML page, and OPTIONS with its automatic text/plain `Allow` list; `mcpBoundary` answers
 * them first: 405 for a method the contract does not list, 404 for anything below it.
 */
import type { RequestHandler } from 'express';
import { ApiError } from '../core/api-error.js';
import type { OpenApiDocument } from '../spec/load-spec.js';

const MCP_PATH = '/v1/mcp';
/** What an unknown path answers, here and for the paths the validator refuses. */
export const UNKNOWN_PATH_MESSAGE = 'Unknown path. The API is described at GET /openapi.json.';

export function mcpBoundary(document: OpenApiDocument): RequestHandler {
  const item = (document.paths?.[MCP_PATH] ?? {}) as Record<string, unknown>;
  const methods = ['get', 'post', 'put', 'patch', 'delete'].filter((method) => item[method] !== undefined);
  // GET and DELETE are in the contract only to be refused (the endpoint keeps no sessions): POST is the one
  // method that works, as their own 405 says.
  const allow = 'POST';
  return (req, _res, next) => {
    if (req.path !== MCP_PATH && !req.path.startsWith(`${MCP_PATH}/`)) {
      next();
    } else if (req.path !== MCP_PATH) {
      next(new ApiError(404, UNKNOWN_PATH_MESSAGE, { code: 'unknown_path' }));
    } else if (!methods.includes(req.method.toLowerCase())) {
      next(new ApiError(405, `Method not allowed: send JSON-RPC messages to ${MCP_PATH} with POST.`, { code: 'method_not_allowed', headers: { allow } }));
    } else {
      next();
    }
  };
}

/** The last stop before the error handler: nothing answered, so the path is not in the contract. */
export function unknownPath(): RequestHandler {
  return (_req, _res, next) => next(new ApiError(404, UNKNOWN_PATH_MESSAGE, { code: 'unknown_path' }));
}
