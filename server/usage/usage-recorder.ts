/**
 * Keeps usage writes off the request path: calls enqueue an entry, a timer writes the queue in one
 * transaction every `flushIntervalMs` (or as soon as `maxBatch` entries wait). `close()` writes whatever is
 * left, so a graceful shutdown loses nothing. Reads flush first, so a record is visible right after its call.
 */
import type { MediaUsage } from '../core/models.js';
import type { UsageEntry, UsageQuery, UsageRecord, UsageStore } from '../storage/usage-store.js';

export interface UsageRecorder {
  record(entry: UsageEntry): void;
  /**
   * Adds what a call produced after it answered (a video task completing later), to the record of its request
   * id. Pending records are written first, so the record exists; called off the request path.
   */
  amend(requestId: string, amount: { units: number; media: MediaUsage }): void;
  flush(): void;
  list(query: UsageQuery): { records: UsageRecord[]; hasMore: boolean };
  close(): void;
  /** For metrics: records waiting, records given up on (none: failed batches are retried), failed writes. */
  stats(): { depth: number; dropped: number; failedWrites: number };
}

export interface UsageRecorderOptions {
  flushIntervalMs?: number;
  maxBatch?: number;
  onError?: (error: unknown, lost: number) => void;
}

export function createUsageRecorder(store: UsageStore, options: UsageRecorderOptions = {}): UsageRecorder {
  const flushIntervalMs = options.flushIntervalMs ?? 200;
  const maxBatch = options.maxBatch ?? 500;
  let queue: UsageEntry[] = [];
  let timer: NodeJS.Timeout | undefined;
  let failedWrites = 0;

  function flush(): void {
    if (timer) {
      clearTimeout(timer);
      timer = undefined;
    }
    if (queue.length === 0) {
      return;
    }
    const batch = queue;
    queue = [];
    try {
      store.insertMany(batch);
    } catch (error) {
      // Put the batch back so a transient failure (database busy) does not lose records.
      queue = batch.concat(queue);
      failedWrites++;
      options.onError?.(error, batch.length);
      schedule();
    }
  }

  function schedule(): void {
    if (!timer) {
      timer = setTimeout(flush, flushIntervalMs);
      timer.unref();
    }
  }

  return {
    record(entry) {
      queue.push(entry);
      if (queue.length >= maxBatch) {
        setImmediate(flush);
      } else {
        schedule();
      }
    },
    flush,
    amend(requestId, amount) {
      flush();
      try {
        store.amendMedia(requestId, amount);
      } catch (error) {
        options.onError?.(error, 1);
      }
    },
    list(query) {
      flush();
      return store.list(query);
    },
    close() {
      flush();
    },
    stats() {
      return { depth: queue.length, dropped: 0, failedWrites };
    },
  };
}
