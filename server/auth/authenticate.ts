/**
 * Authentication, before validation (an unauthenticated request gets 401, not a 400 about its body).
 * `Authorization: Bearer <key>` everywhere; on `/anthropic` also `x-api-key` (older Anthropic SDKs, the AI
 * SDK, LangChain and Claude Code send it), with any `anthropic-version`. Public paths need no key.
 *
 * Keys are checked against the key cache (storage/key-cache.ts): a key seen before is answered synchronously,
 * with no database read; only a key not yet held waits for the key store.
 */
import type { RequestHandler } from 'express';
import { ApiError } from '../core/api-error.js';
import { apiFamilyOf } from '../http/api-family.js';
import type { OpenApiDocument } from '../spec/load-spec.js';
import type { KeyCache } from '../storage/key-cache.js';
import type { ApiKeyRecord } from '../storage/key-store.js';
import { bearerToken, pathMatcher, type AdminKeyCheck } from './admin-key.js';

function presentedKey(
  authorization: string | undefined,
  apiKeyHeader: string | undefined,
  anthropic: boolean,
): string | undefined {
  const bearer = bearerToken(authorization);
  if (bearer) {
    return bearer;
  }
  if (anthropic && apiKeyHeader) {
    return apiKeyHeader.trim();
  }
  return undefined;
}

/** Which request paths need no key. */
export type PublicPaths = (path: string) => boolean;

/**
 * The paths whose every operation the contract marks `security: []` (health, docs, the contract itself, signed
 * media links). A templated segment (`{id}`) matches one path segment.
 */
export function publicPaths(document: OpenApiDocument): PublicPaths {
  const paths = new Set<string>();
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    const operations = Object.values(item ?? {}).filter(
      (value): value is { security?: unknown[] } => typeof value === 'object' && value !== null && 'responses' in value,
    );
    if (
      operations.length > 0 &&
      operations.every((operation) => Array.isArray(operation.security) && operation.security.length === 0)
    ) {
      paths.add(path);
    }
  }
  const exact = new Set([...paths].filter((path) => !path.includes('{')));
  const templated = [...paths]
    .filter((path) => path.includes('{'))
    .map(
      (path) =>
        new RegExp(
          `^${path
            .split(/\{[^}]+\}/)
            .map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))
            .join('[^/]+')}$`,
        ),
    );
  return (path) => exact.has(path) || templated.some((pattern) => pattern.test(path));
}

/** Paths that take the admin key (admin-key.ts) instead of an API key, and how to check it. */
export interface AdminAccess {
  paths: ReadonlySet<string>;
  check: AdminKeyCheck;
}

const adminKeyRequired = () =>
  new ApiError(
    401,
    'This operation needs the admin key (OMNIGATE_ADMIN_KEY, or a key made with `omnigate keys create --admin`) as `Authorization: Bearer <admin key>`; API keys are not accepted.',
    { code: 'admin_key_required' },
  );

const adminKeyNotApiKey = () =>
  new ApiError(403, 'This is an admin key: it authenticates the admin API (/admin/v1) only; use an API key here.', {
    code: 'admin_key_not_api_key',
  });

export function authenticate(
  keys: Pick<KeyCache, 'cached' | 'verify'>,
  isPublic: PublicPaths,
  admin?: AdminAccess,
): RequestHandler {
  const isAdminPath = pathMatcher(admin?.paths ?? []);
  return (req, res, next) => {
    if (isPublic(req.path)) {
      next();
      return;
    }
    if (admin && isAdminPath(req.path)) {
      const token = bearerToken(req.get('authorization'));
      if (admin.check(token)) {
        next();
        return;
      }
      if (!token) {
        next(adminKeyRequired());
        return;
      }
      // An admin key of the key store (`keys create --admin`) is admitted too; an API key is refused like none.
      const admitAdmin = (key: ApiKeyRecord | undefined) => next(key?.admin ? undefined : adminKeyRequired());
      const hit = keys.cached(token);
      if (hit) {
        admitAdmin(hit.record);
      } else {
        keys.verify(token).then(admitAdmin, next);
      }
      return;
    }
    const anthropic = apiFamilyOf(req.path) === 'anthropic';
    const secret = presentedKey(req.get('authorization'), req.get('x-api-key'), anthropic);
    if (!secret) {
      const how = anthropic
        ? 'an `Authorization: Bearer <key>` or `x-api-key: <key>` header'
        : 'an `Authorization: Bearer <key>` header';
      // x-api-key is the Anthropic way, honoured under /anthropic only: say so rather than just "missing".
      const hint =
        !anthropic && req.get('x-api-key')
          ? ' The `x-api-key` header is read only under /anthropic; /v1 wants `Authorization: Bearer <key>`.'
          : '';
      next(new ApiError(401, `Missing API key: send ${how}.${hint}`, { code: 'missing_api_key' }));
      return;
    }
    const admitKey = (key: ApiKeyRecord | undefined) => {
      // The operator's OMNIGATE_ADMIN_KEY is never in the key store: it is compared (in constant time) only once
      // the store does not know the secret, so an API key's call never pays for it.
      if (key?.admin || (!key && admin?.check(secret))) {
        // An admin key runs the admin API only: it has no limits, usage or models of its own to spend.
        next(adminKeyNotApiKey());
        return;
      }
      if (!key) {
        next(new ApiError(401, 'Invalid API key.', { code: 'invalid_api_key' }));
        return;
      }
      res.locals.apiKey = key;
      next();
    };
    const hit = keys.cached(secret);
    if (hit) {
      admitKey(hit.record);
      return;
    }
    keys.verify(secret).then(admitKey, next);
  };
}
