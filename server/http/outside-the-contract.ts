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
import { OPERATION_METHODS } from '../spec/contract-operations.js';
import type { OpenApiDocument } from '../spec/load-spec.js';

const MCP_PATH = '/v1/mcp';
/** What an unknown path answers, here and for the paths the validator refuses. */
export const UNKNOWN_PATH_MESSAGE = 'Unknown path. The API is described at GET /openapi.json.';

export function mcpBoundary(document: OpenApiDocument): RequestHandler {
  const item = (document.paths?.[MCP_PATH] ?? {}) as Record<string, unknown>;
  const methods: string[] = OPERATION_METHODS.filter((method) => item[method] !== undefined);
  // GET and DELETE are in the contract only to be refused (the endpoint keeps no sessions): POST is the one
  // method that works, as their own 405 says.
  const allow = 'POST';
  return (req, _res, next) => {
    if (req.path !== MCP_PATH && !req.path.startsWith(`${MCP_PATH}/`)) {
      next();
    } else if (req.path !== MCP_PATH) {
      next(new ApiError(404, UNKNOWN_PATH_MESSAGE, { code: 'unknown_path' }));
    } else if (!methods.includes(req.method.toLowerCase())) {
      next(
        new ApiError(405, `Method not allowed: send JSON-RPC messages to ${MCP_PATH} with POST.`, {
          code: 'method_not_allowed',
          headers: { allow },
        }),
      );
    } else {
      next();
    }
  };
}

const DOCS_PATH = '/docs';

/**
 * `/docs/` and `/docs/<anything>` are not pages: the Redoc page is `/docs` and it routes by the URL's hash. Links
 * written as paths (`/docs/#tag/Models/operation/listModels`, `/docs/tag/Models/operation/listModels`) are sent
 * there with a 301, the path becoming the hash (a browser keeps a link's own hash across the redirect), where the
 * page's anchor script (scripts/docs-anchors.mjs) maps Redoc 2's forms to the current ones. Before authentication:
 * the docs need no key, and a docs link answered 401 would be the dead end this avoids.
 */
export function docsSubpaths(): RequestHandler {
  return (req, res, next) => {
    if (!req.path.startsWith(`${DOCS_PATH}/`) || (req.method !== 'GET' && req.method !== 'HEAD')) {
      next();
      return;
    }
    // `index.html` is the page itself, the name `npm run docs` gives its file.
    const rest = req.path
      .slice(DOCS_PATH.length + 1)
      .replace(/^\/+|\/+$/g, '')
      .replace(/^index\.html$/, '');
    // Only path characters go into the Location header; anything else ends the hash there.
    const hash = rest.replace(/[^A-Za-z0-9\-._~!$&'()*+,;=:@/%]/g, '');
    res.redirect(301, hash ? `${DOCS_PATH}#${hash}` : DOCS_PATH);
  };
}

/** The last stop before the error handler: nothing answered, so the path is not in the contract. */
export function unknownPath(): RequestHandler {
  return (_req, _res, next) => next(new ApiError(404, UNKNOWN_PATH_MESSAGE, { code: 'unknown_path' }));
}
