/**
 * The operator's admin key (`OMNIGATE_ADMIN_KEY`): a bearer token for operations the contract secures with the
 * `adminKey` scheme (`GET /metrics`, the admin API under `/admin/v1`). It is not an API key and never lives in
 * the key store: an API key is refused on these operations, and the admin key is refused everywhere else.
 * Admin keys made with `omnigate keys create --admin` live in the key store, flagged `admin`, and are admitted
 * here like it (auth/authenticate.ts); they too are refused on every other operation. Compared in constant time over SHA-256 digests, so neither the key's content nor its length
 * leaks through timing.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { OpenApiDocument } from '../spec/load-spec.js';

/** True when `presented` is the admin key; always false when none is configured. */
export type AdminKeyCheck = (presented: string | undefined) => boolean;

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

export function adminKeyCheck(adminKey: string | undefined): AdminKeyCheck {
  if (!adminKey) {
    return () => false;
  }
  const expected = digest(adminKey);
  return (presented) => presented !== undefined && timingSafeEqual(digest(presented), expected);
}

/** The bearer token of an `Authorization` header, if it has one. */
export function bearerToken(authorization: string | undefined): string | undefined {
  const match = authorization ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null;
  return match ? match[1] : undefined;
}

/** The paths whose every operation the contract secures with `adminKey` alone, as the contract writes them. */
export function adminPaths(document: OpenApiDocument): Set<string> {
  const paths = new Set<string>();
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    const operations = Object.values(item ?? {}).filter(
      (value): value is { security?: Array<Record<string, unknown>> } =>
        typeof value === 'object' && value !== null && 'responses' in value,
    );
    const adminOnly = (security: Array<Record<string, unknown>> | undefined) =>
      Array.isArray(security) &&
      security.length > 0 &&
      security.every((requirement) => Object.keys(requirement).length === 1 && 'adminKey' in requirement);
    if (operations.length > 0 && operations.every((operation) => adminOnly(operation.security))) {
      paths.add(path);
    }
  }
  return paths;
}

/** Whether a request path is one of `paths` (a templated segment, `{key_id}`, matches one path segment). */
export function pathMatcher(paths: Iterable<string>): (path: string) => boolean {
  const all = [...paths];
  const exact = new Set(all.filter((path) => !path.includes('{')));
  const templated = all
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
