/**
 * Media behind signed links lives only as long as its link: expired blobs are deleted when the server starts
 * and then every minute (periodic-purge.ts), so a link's bytes are gone at most a minute after it stops working.
 */
import type { BlobStore } from './blob-store.js';
import { type PurgeSchedule, startPeriodicPurge } from './periodic-purge.js';

export const BLOB_PURGE_INTERVAL_MS = 60_000;

/** Purges now and every `intervalMs`; returns the function that stops it. */
export function startBlobPurge(store: Pick<BlobStore, 'purge'>, options: Partial<PurgeSchedule> = {}): () => void {
  return startPeriodicPurge((now) => store.purge(now), {
    ...options,
    intervalMs: options.intervalMs ?? BLOB_PURGE_INTERVAL_MS,
  });
}
