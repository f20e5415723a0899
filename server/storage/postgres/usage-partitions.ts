/**
 * The usage table is partitioned by day of `created_at` (unix seconds, UTC days): retention drops whole
 * partitions (one catalogue change) instead of deleting rows one by one, which is what OOM-kills LiteLLM's
 * cleanup (BerriAI/litellm#21908). There is no default partition, so a day's partition must exist before its
 * rows arrive: `ensure` creates the days a batch needs (and the next ones ahead) under a transaction-scoped
 * advisory lock, so two instances creating the same day do not collide.
 */
import { type PgPool, query, transaction } from './pool.js';

const DAY = 86_400;
const PARTITION_LOCK = 0x75736167; // 'usag'
/** Days created ahead of the newest needed, so the day boundary never waits on DDL. */
const DAYS_AHEAD = 2;

export function partitionName(day: number): string {
  return `usage_records_${new Date(day * DAY * 1000).toISOString().slice(0, 10).replaceAll('-', '')}`;
}

export interface UsagePartitions {
  /** Makes sure a partition exists for each of these times (unix seconds) and the days ahead of the newest. */
  ensure(times: number[]): Promise<void>;
  /** Forgets which partitions exist (another instance may have dropped one): the next `ensure` looks again. */
  forget(): void;
  /** Drops the partitions that only hold rows created before `createdAt`; answers their names. */
  dropOlderThan(createdAt: number): Promise<string[]>;
}

export function createUsagePartitions(pool: PgPool): UsagePartitions {
  const known = new Set<number>();
  return {
    forget() {
      known.clear();
    },
    async ensure(times) {
      const days = new Set(times.map((time) => Math.floor(time / DAY)));
      const newest = Math.max(...days);
      for (let ahead = 1; ahead <= DAYS_AHEAD; ahead++) {
        days.add(newest + ahead);
      }
      const missing = [...days].filter((day) => !known.has(day));
      if (missing.length === 0) {
        return;
      }
      await transaction(pool, async (client) => {
        await client.query('SELECT pg_advisory_xact_lock($1)', [PARTITION_LOCK]);
        for (const day of missing) {
          await client.query(
            `CREATE TABLE IF NOT EXISTS ${partitionName(day)} PARTITION OF usage_records FOR VALUES FROM (${day * DAY}) TO (${(day + 1) * DAY})`,
          );
        }
      });
      for (const day of missing) {
        known.add(day);
      }
    },
    async dropOlderThan(createdAt) {
      const { rows } = await query<{ name: string; bound: string }>(
        pool,
        `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound FROM pg_inherits i
         JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'usage_records'::regclass`,
      );
      const dropped: string[] = [];
      for (const row of rows) {
        const upper = /TO \('?(-?\d+)'?\)/.exec(row.bound);
        if (upper && Number(upper[1]) <= createdAt) {
          await transaction(pool, async (client) => {
            await client.query('SELECT pg_advisory_xact_lock($1)', [PARTITION_LOCK]);
            await client.query(`DROP TABLE IF EXISTS ${row.name}`);
          });
          known.delete(Number(upper[1]) / DAY - 1);
          dropped.push(row.name);
        }
      }
      return dropped;
    },
  };
}
