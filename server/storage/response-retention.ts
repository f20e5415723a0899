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
    /** A purge that failed (the database unreachable); the next one tries again. */
    onError?: (error: unknown) => void;
  },
): () => void {
  const now = options.now ?? (() => Math.floor(Date.now() / 1000));
  let running = false;
  const purge = async () => {
    if (running) {
      return;
    }
    running = true;
    try {
      const count = await store.deleteOlderThan(now() - options.retentionDays * DAY_SECONDS);
      if (count > 0) {
        options.onPurge?.(count);
      }
    } catch (error) {
      options.onError?.(error);
    } finally {
      running = false;
    }
  };
  void purge();
  const timer = setInterval(() => void purge(), options.intervalMs ?? RESPONSE_PURGE_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
