/**
 * Usage records are kept for OMNIGATE_USAGE_RETENTION_DAYS when it is set (forever otherwise), purged at start
 * and then hourly. On SQLite old rows are deleted in bounded batches, each its own short transaction, so a
 * first purge of millions of rows neither holds the writer for long nor builds one huge transaction (the
 * row-by-row cleanup that OOM-kills LiteLLM's pods, BerriAI/litellm#21908). On PostgreSQL the table is
 * partitioned by day and the purge drops whole partitions instead (postgres/usage-partitions.ts); a partition is
 * dropped once all of its day is past the retention, so rows up to a day older than the retention may remain.
 */
import type { SqliteDatabase } from './database.js';
import { type PurgeSchedule, startPeriodicPurge } from './periodic-purge.js';

const DAY_SECONDS = 86_400;
export const USAGE_PURGE_INTERVAL_MS = 60 * 60 * 1000;
/** Rows per DELETE on SQLite. */
const SQLITE_BATCH = 5_000;

export interface UsageRetention {
  /** Deletes the records created before `createdAt` (unix seconds); answers how many rows (or partitions) went. */
  purgeOlderThan(createdAt: number): Promise<number>;
}

export function createSqliteUsageRetention(db: SqliteDatabase, batch = SQLITE_BATCH): UsageRetention {
  let deleteBatch: ReturnType<typeof db.prepare<[number, number]>> | undefined;
  return {
    async purgeOlderThan(createdAt) {
      // The purge's own index, made at its first run (a database without retention is left as it was):
      // without it each batch would scan the table for old rows.
      if (!deleteBatch) {
        db.exec('CREATE INDEX IF NOT EXISTS usage_by_time ON usage_records (created_at)');
        deleteBatch = db.prepare<[number, number]>(
          'DELETE FROM usage_records WHERE seq IN (SELECT seq FROM usage_records WHERE created_at < ? LIMIT ?)',
        );
      }
      let total = 0;
      for (;;) {
        const deleted = deleteBatch.run(createdAt, batch).changes;
        total += deleted;
        if (deleted < batch) {
          return total;
        }
        // Between batches, requests (and the usage writer) get the event loop and the database.
        await new Promise((resolve) => setImmediate(resolve));
      }
    },
  };
}

/** Purges now and every `intervalMs`; returns the function that stops it. */
export function startUsagePurge(
  retention: UsageRetention,
  options: { retentionDays: number } & Partial<PurgeSchedule>,
): () => void {
  return startPeriodicPurge((now) => retention.purgeOlderThan(now - options.retentionDays * DAY_SECONDS), {
    ...options,
    intervalMs: options.intervalMs ?? USAGE_PURGE_INTERVAL_MS,
  });
}
