/**
 * Authentication, before validation (an unauthenticated request gets 401, not a 400 about its body).
 * `Authorization: Bearer <key>` everywhere; on `/anthropic` also `x-api-key` (older Anthropic SDKs, the AI
 * SDK, LangChain and Claude Code send it), with any `anthropic-version`. Public paths need no key.
 */
import type { RequestHandler } from 'express';
import { ApiError } from '../http/api-error.js';
import { apiFamilyOf } from '../http/api-family.js';
import type { KeyStore } from '../storage/key-store.js';

const PUBLIC_PATHS = new Set(['/health', '/docs', '/openapi.json', '/openapi.yaml']);

function presentedKey(authorization: string | undefined, apiKeyHeader: string | undefined, anthropic: boolean): string | undefined {
  if (authorization) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match) {
      return match[1];
    }
  }
  if (anthropic && apiKeyHeader) {
    return apiKeyHeader.trim();
  }
  return undefined;
}

export function authenticate(keys: KeyStore): RequestHandler {
  return (req, res, next) => {
    if (PUBLIC_PATHS.has(req.path)) {
      next();
      return;
    }
    const anthropic = apiFamilyOf(req.path) === 'anthropic';
    const secret = presentedKey(req.get('authorization'), req.get('x-api-key'), anthropic);
    if (!secret) {
      const how = anthropic ? 'an `Authorization: Bearer <key>` or `x-api-key: <key>` header' : 'an `Authorization: Bearer <key>` header';
      next(new ApiError(401, `Missing API key: send ${how}.`, { code: 'missing_api_key' }));
      return;
    }
    const key = keys.verify(secret);
    if (!key) {
      next(new ApiError(401, 'Invalid API key.', { code: 'invalid_api_key' }));
      return;
    }
    res.locals.apiKey = key;
    next();
  };
}
