/**
 * Stored responses hold whole conversations, so they are kept only for OMNIGATE_RESPONSE_RETENTION_DAYS:
 * purged when the server starts and then periodically (periodic-purge.ts).
 */
import { type PurgeSchedule, startPeriodicPurge } from './periodic-purge.js';
import type { ResponseStore } from './response-store.js';

const DAY_SECONDS = 86_400;
/** How often the purge runs after the one at start. */
export const RESPONSE_PURGE_INTERVAL_MS = 60 * 60 * 1000;

/** Purges now and every `intervalMs`; returns the function that stops it. */
export function startResponsePurge(
  store: Pick<ResponseStore, 'deleteOlderThan'>,
  options: { retentionDays: number } & Partial<PurgeSchedule>,
): () => void {
  return startPeriodicPurge((now) => store.deleteOlderThan(now - options.retentionDays * DAY_SECONDS), {
    ...options,
    intervalMs: options.intervalMs ?? RESPONSE_PURGE_INTERVAL_MS,
  });
}
