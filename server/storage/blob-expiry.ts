/**
 * Media behind signed links lives only as long as its link: expired blobs are deleted when the server starts
 * and then every minute, so a link's bytes are gone at most a minute after it stops working. The timer is
 * unref'd so it never holds the process.
 */
import type { BlobStore } from './blob-store.js';

export const BLOB_PURGE_INTERVAL_MS = 60_000;

/** Purges now and every `intervalMs`; returns the function that stops it. */
export function startBlobPurge(
  store: Pick<BlobStore, 'purge'>,
  options: {
    intervalMs?: number;
    now?: () => number;
    onPurge?: (count: number) => void;
    onError?: (error: unknown) => void;
  } = {},
): () => void {
  const now = options.now ?? (() => Math.floor(Date.now() / 1000));
  let running = false;
  const purge = async () => {
    if (running) {
      return;
    }
    running = true;
    try {
      const count = await store.purge(now());
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
  const timer = setInterval(() => void purge(), options.intervalMs ?? BLOB_PURGE_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
