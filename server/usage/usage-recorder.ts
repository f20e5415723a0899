/**
 * Keeps usage writes off the request path: calls enqueue an entry (synchronously, no I/O), and the queue is
 * written in batches of up to `maxBatch` rows (one multi-row insert each) every `flushIntervalMs`, or as soon
 * as a batch is full. One write is in flight at a time; the next batch waits for the event loop to turn, so a
 * long queue never blocks it. `close()` writes whatever is left, so a graceful shutdown loses nothing. Reads
 * flush first, so a record is visible right after its call.
 *
 * When the database does not take writes (unreachable, locked), the failed batch goes back to the head of the
 * queue and is retried with backoff (doubling from `flushIntervalMs` up to `maxRetryMs`). The queue is bounded
 * (`maxBuffered`, OMNIGATE_USAGE_BUFFER_MAX): while it is full, each NEW record is dropped and counted — the
 * records kept are the oldest, in order, so what is lost is one contiguous stretch at the end of an outage —
 * with one error line when dropping starts and one when writes resume, never one per record.
 */
import type { Logger } from 'pino';
import { DEFAULT_USAGE_BUFFER_MAX } from '../config.js';
import type {
  UsageAmendment,
  UsageEntry,
  UsageQuery,
  UsageRecord,
  UsageStore,
  UsageSummaryQuery,
  UsageSummaryRow,
} from '../storage/usage-store.js';

export interface UsageRecorder {
  record(entry: UsageEntry): void;
  /**
   * Says a record will come later (a stream's, written once its tokens are counted); returns the function that
   * says it came. `close()` waits for such records (up to `closeTimeoutMs`) before writing what is left: a stream
   * cut by the shutdown counts its tokens after its connection closed, and its record must not miss the last write.
   */
  expect(): () => void;
  /**
   * Adds what a call produced after it answered (a video task completing later), to the record of its request
   * id: in the queue when the record still waits there, else in the database. Never rejects (a failure is logged).
   */
  amend(requestId: string, amount: UsageAmendment): Promise<void>;
  /** Writes what waits now (also during a backoff); never rejects: what could not be written stays queued. */
  flush(): Promise<void>;
  list(query: UsageQuery): Promise<{ records: UsageRecord[]; hasMore: boolean }>;
  /** Totals per group, after writing what waits (so a summary agrees with the records listed). */
  summary(query: UsageSummaryQuery): Promise<UsageSummaryRow[]>;
  /**
   * Waits for the records still expected, then writes what is left, retrying until `closeTimeoutMs`; what still
   * fails is logged as lost. A record queued after it is still written by its timer or the next `flush()` (the
   * services flush once more last).
   */
  close(): Promise<void>;
  /** For metrics: records waiting, records dropped because the queue was full, failed batch writes. */
  stats(): { depth: number; dropped: number; failedWrites: number };
}

export interface UsageRecorderOptions {
  flushIntervalMs?: number;
  /** Rows per insert. */
  maxBatch?: number;
  /** Records the queue holds at most while writes fail; newer ones are dropped and counted. */
  maxBuffered?: number;
  /** The longest wait between two retries of a failing write. */
  maxRetryMs?: number;
  /** How long `close()` keeps retrying a failing write before giving the rest up. */
  closeTimeoutMs?: number;
  logger?: Pick<Logger, 'error' | 'info'>;
}

export function createUsageRecorder(store: UsageStore, options: UsageRecorderOptions = {}): UsageRecorder {
  const flushIntervalMs = options.flushIntervalMs ?? 200;
  const maxBatch = options.maxBatch ?? 500;
  const maxBuffered = options.maxBuffered ?? DEFAULT_USAGE_BUFFER_MAX;
  const maxRetryMs = options.maxRetryMs ?? 5_000;
  const closeTimeoutMs = options.closeTimeoutMs ?? 5_000;
  const logger = options.logger;
  let queue: UsageEntry[] = [];
  let timer: NodeJS.Timeout | undefined;
  /** The write in flight, if any: one at a time, so batches stay in order. */
  let writing: Promise<void> | undefined;
  let failedWrites = 0;
  let dropped = 0;
  /** Consecutive failed writes: the backoff's exponent, and whether an outage is going on (> 0). */
  let failures = 0;
  /** Records dropped since writes last succeeded (an episode ends with the next successful write). */
  let droppedThisOutage = 0;
  /** Records announced by `expect()` and not yet come, and who waits for the count to reach 0. */
  let expected = 0;
  let noneExpected: (() => void) | undefined;

  function schedule(delayMs: number): void {
    if (!timer) {
      timer = setTimeout(() => {
        timer = undefined;
        void flush();
      }, delayMs);
      timer.unref();
    }
  }

  /** Writes batches until the queue is empty or a write fails; false when one failed. */
  async function drain(): Promise<boolean> {
    while (queue.length > 0) {
      const batch = queue.length <= maxBatch ? queue : queue.slice(0, maxBatch);
      queue = batch === queue ? [] : queue.slice(maxBatch);
      try {
        await store.insertMany(batch);
      } catch (error) {
        // Back at the head, so the order is kept and nothing is lost below the bound.
        queue = batch.concat(queue);
        failedWrites++;
        if (failures++ === 0) {
          logger?.error(
            { err: error, pending: queue.length },
            'usage records cannot be written; keeping them and retrying with backoff',
          );
        }
        return false;
      }
      if (failures > 0 || droppedThisOutage > 0) {
        logger?.info(
          { failedWrites: failures, dropped: droppedThisOutage, pending: queue.length },
          'usage records are written again',
        );
        failures = 0;
        droppedThisOutage = 0;
      }
      if (queue.length > 0) {
        // Let requests run between two batches of a long queue.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
    return true;
  }

  function flush(): Promise<void> {
    if (timer) {
      clearTimeout(timer);
      timer = undefined;
    }
    if (writing === undefined) {
      writing = drain().then((ok) => {
        writing = undefined;
        if (!ok) {
          schedule(Math.min(flushIntervalMs * 2 ** (failures - 1), maxRetryMs));
        }
      });
    }
    return writing;
  }

  return {
    record(entry) {
      if (queue.length >= maxBuffered) {
        dropped++;
        if (droppedThisOutage++ === 0) {
          logger?.error(
            { maxBuffered, pending: queue.length },
            'usage record buffer is full (OMNIGATE_USAGE_BUFFER_MAX): new usage records are dropped until writes succeed',
          );
        }
        return;
      }
      queue.push(entry);
      if (failures > 0 || writing !== undefined) {
        return; // the retry (or the write in flight, then the timer) takes it
      }
      if (queue.length >= maxBatch) {
        setImmediate(() => void flush());
      } else {
        schedule(flushIntervalMs);
      }
    },
    flush,
    async amend(requestId, amount) {
      await writing;
      // Still queued (a write failed, or it was recorded a moment ago): amended where it waits.
      for (let index = queue.length - 1; index >= 0; index--) {
        const entry = queue[index]!; // 0 ≤ index < queue.length
        if (entry.requestId === requestId) {
          const placed = amount.placed;
          queue[index] = {
            ...entry,
            units: amount.units ?? entry.units,
            media: amount.media ?? entry.media,
            ...(placed && {
              deployment: placed.deployment ?? entry.deployment,
              provider: placed.provider ?? entry.provider,
              attempts: placed.attempts,
            }),
          };
          return;
        }
      }
      try {
        await store.amendMedia(requestId, amount);
      } catch (error) {
        logger?.error({ err: error, requestId }, 'amending a usage record failed');
      }
    },
    async list(query) {
      await flush();
      return store.list(query);
    },
    async summary(query) {
      await flush();
      return store.summary(query);
    },
    expect() {
      expected++;
      let came = false;
      return () => {
        if (!came) {
          came = true;
          if (--expected === 0) {
            noneExpected?.();
          }
        }
      };
    },
    async close() {
      const deadline = Date.now() + closeTimeoutMs;
      if (expected > 0) {
        let timeout: NodeJS.Timeout | undefined;
        await new Promise<void>((resolve) => {
          noneExpected = resolve;
          timeout = setTimeout(resolve, closeTimeoutMs);
        });
        clearTimeout(timeout);
        noneExpected = undefined;
        if (expected > 0) {
          logger?.error({ expected }, 'streams still counting at shutdown: their usage records may be late');
        }
      }
      await flush();
      while (queue.length > 0 && Date.now() < deadline) {
        const wait = Math.min(flushIntervalMs * 2 ** Math.max(0, failures - 1), maxRetryMs, deadline - Date.now());
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, wait)));
        await flush();
      }
      if (queue.length > 0) {
        logger?.error({ lost: queue.length }, 'usage records could not be written before shutdown and are lost');
        dropped += queue.length;
        queue = [];
      }
    },
    stats() {
      return { depth: queue.length, dropped, failedWrites };
    },
  };
}
