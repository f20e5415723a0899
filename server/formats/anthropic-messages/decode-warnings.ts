/**
 * Warning plumbing shared by the Anthropic Messages request decoder: the `Warn` callback (one warning per field
 * name, built by `createWarnOnce`), the `hasValue` presence test, and the `cache_control` note that one warning
 * covers for the whole body.
 */
import type { CallWarning } from '../../core/call-context.js';

const CACHE_CONTROL_REASON = 'prompt caching hints are not forwarded; the provider caches on its own terms';

export type Warn = (field: string, reason: string) => void;

export function createWarnOnce(warn: (warning: CallWarning) => void): Warn {
  const seen = new Set<string>();
  return (field, reason) => {
    if (!seen.has(field)) {
      seen.add(field);
      warn({ field, reason });
    }
  };
}

export function hasValue(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/** Every block type may carry `cache_control`; one warning covers the whole body. */
export function noteCacheControl(block: { cache_control?: unknown }, warn: Warn): void {
  if (hasValue(block.cache_control)) {
    warn('cache_control', CACHE_CONTROL_REASON);
  }
}
