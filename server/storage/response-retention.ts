/**
 * Stored responses hold whole conversations, so they are kept only for OMNIGATE_RESPONSE_RETENTION_DAYS:
 * purged when the server starts and then periodically. The timer is unref'd so it never holds the process.
 */
import type { ResponseStore } from './response-store.js';

const DAY_SECONDS = 86_400;
/** How often the purge runs after the one at start. */
export const RESPONSE_PURGE_INTERVAL_MS = 60 * 60 * 1000;

/** Purges now and every `intervalMs`; returns the function that stops it. */
export function startResponsePurge(
  store: Pick<ResponseStore, 'deleteOlderThan'>,
  options: {
    retentionDays: number;
    intervalMs?: number;
    /** Unix seconds. */
    now?: () => number;
    /** Called after each purge that deleted something. */
    onPurge?: (count: number) => void;
  },
): () => void {
  const now = options.now ?? (() => Math.floor(Date.now() / 1000));
  const purge = () => {
    const count = store.deleteOlderThan(now() - options.retentionDays * DAY_SECONDS);
    if (count > 0) {
      options.onPurge?.(count);
    }
  };
  purge();
  const timer = setInterval(purge, options.intervalMs ?? RESPONSE_PURGE_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
