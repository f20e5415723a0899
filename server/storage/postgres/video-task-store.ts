/**
 * Video tasks on PostgreSQL: the SQLite store's queue, leases and fair claim order, for runners on several
 * instances. A claim is one statement: the candidate rows are ordered as on SQLite (the key with the fewest
 * tasks running, then the key claimed from least recently, then the oldest task) and the first one not locked
 * by another claimer is taken with `FOR UPDATE SKIP LOCKED`; PostgreSQL re-checks the row's state after the
 * lock, so a task another runner claimed meanwhile is passed over, and two claimers never take one task.
 * `claim_order` comes from a sequence instead of MAX()+1, which two transactions could both read.
 */
import { randomId } from '../../core/random-id.js';
import {
  type CreateVideoTaskOutcome,
  type NewVideoTask,
  PENDING_INPUT_BLOB,
  type VideoStatus,
  type TaskRow,
  toTask,
  type VideoTaskStore,
} from '../video-task-store.js';
import { type PgPool, query, transaction } from './pool.js';

const INSERT = `INSERT INTO video_tasks (id, key_id, request_id, model, prompt, seconds, width, height, input_blob, status, run_after, created_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'queued', $10, $11) RETURNING *`;

const RUNNABLE = "((t.status = 'queued' AND t.run_after <= $2) OR (t.status = 'processing' AND t.lease_until < $2))";

const CLAIM = `UPDATE video_tasks
  SET status = 'processing', claimed_by = $1, lease_until = $3, attempts = attempts + 1, claim_order = nextval('video_claim_order')
  WHERE id = (
    SELECT t.id FROM video_tasks t
    WHERE ${RUNNABLE}
    ORDER BY
      (SELECT count(*) FROM video_tasks held WHERE held.key_id = t.key_id AND held.status = 'processing' AND held.lease_until >= $2),
      COALESCE((SELECT max(served.claim_order) FROM video_tasks served WHERE served.key_id = t.key_id), 0),
      t.seq
    LIMIT 1
    FOR UPDATE SKIP LOCKED
  ) AND ${RUNNABLE.replaceAll('t.', 'video_tasks.')}
  RETURNING *`;

export function createPostgresVideoTaskStore(pool: PgPool): VideoTaskStore {
  const insertValues = (task: NewVideoTask, now: number, runAfter: number) => [
    randomId('video'),
    task.keyId,
    task.requestId,
    task.model,
    task.prompt,
    task.seconds,
    task.width,
    task.height,
    task.inputBlob,
    runAfter,
    now,
  ];
  const changed = async (text: string, values: unknown[]) => ((await query(pool, text, values)).rowCount ?? 0) === 1;
  const activeCount = async (keyId: string) => {
    const { rows } = await query<{ count: number }>(
      pool,
      "SELECT count(*) AS count FROM video_tasks WHERE key_id = $1 AND status IN ('queued', 'processing')",
      [keyId],
    );
    return rows[0]!.count; // count(*) returns one row
  };

  return {
    async create(task, now) {
      const { rows } = await query<TaskRow>(pool, INSERT, insertValues(task, now, now));
      return toTask(rows[0]!); // an INSERT … RETURNING that succeeded returns its row
    },
    async createWithin(task, now, maxActive, options = {}): Promise<CreateVideoTaskOutcome> {
      return transaction(pool, async (client) => {
        // One key's creates are serialised, so the count and the insert cannot interleave across instances.
        await client.query("SELECT pg_advisory_xact_lock(hashtext('omnigate videos ' || $1))", [task.keyId]);
        const { rows } = await client.query<{ count: number }>(
          "SELECT count(*) AS count FROM video_tasks WHERE key_id = $1 AND status IN ('queued', 'processing')",
          [task.keyId],
        );
        const current = rows[0]!.count; // count(*) returns one row
        if (current >= maxActive) {
          return { refused: { active: current } };
        }
        const inserted = await client.query<TaskRow>(INSERT, insertValues(task, now, options.runAfter ?? now));
        return { task: toTask(inserted.rows[0]!) }; // an INSERT … RETURNING that succeeded returns its row
      });
    },
    attachInput: (id, inputBlob, now) =>
      changed(
        `UPDATE video_tasks SET input_blob = $2, run_after = $3 WHERE id = $1 AND status = 'queued' AND input_blob = '${PENDING_INPUT_BLOB}'`,
        [id, inputBlob, now],
      ),
    failQueued: (id, error) =>
      changed(
        "UPDATE video_tasks SET status = 'failed', error_code = $2, error_message = $3, completed_at = $4 WHERE id = $1 AND status = 'queued'",
        [id, error.code, error.message, error.now],
      ),
    activeCount,
    async get(id, keyId) {
      const { rows } = await query<TaskRow>(pool, 'SELECT * FROM video_tasks WHERE id = $1 AND key_id = $2', [
        id,
        keyId,
      ]);
      return rows[0] ? toTask(rows[0]) : undefined;
    },
    async list({ keyId, after, limit, order }) {
      const values: unknown[] = [keyId];
      let condition = '';
      if (after !== undefined) {
        const { rows } = await query<{ seq: number }>(
          pool,
          'SELECT seq FROM video_tasks WHERE id = $1 AND key_id = $2',
          [after, keyId],
        );
        if (!rows[0]) {
          return { tasks: [], hasMore: false }; // an unknown cursor continues nothing
        }
        values.push(rows[0].seq);
        condition = ` AND seq ${order === 'asc' ? '>' : '<'} $2`;
      }
      values.push(limit + 1);
      const { rows } = await query<TaskRow>(
        pool,
        `SELECT * FROM video_tasks WHERE key_id = $1${condition} ORDER BY seq ${order === 'asc' ? 'ASC' : 'DESC'} LIMIT $${values.length}`,
        values,
      );
      return { tasks: rows.slice(0, limit).map(toTask), hasMore: rows.length > limit };
    },
    async claim(runner, now, leaseMs) {
      const { rows } = await query<TaskRow>(pool, CLAIM, [runner, now, now + leaseMs]);
      return rows[0] ? toTask(rows[0]) : undefined;
    },
    renew: (id, runner, now, leaseMs) =>
      changed("UPDATE video_tasks SET lease_until = $3 WHERE id = $1 AND claimed_by = $2 AND status = 'processing'", [
        id,
        runner,
        now + leaseMs,
      ]),
    async setProgress(id, runner, value) {
      await query(
        pool,
        "UPDATE video_tasks SET progress = $3 WHERE id = $1 AND claimed_by = $2 AND status = 'processing' AND progress < $3",
        [id, runner, Math.max(0, Math.min(99, Math.round(value)))],
      );
    },
    async setCheckpoint(id, runner, value) {
      await query(
        pool,
        "UPDATE video_tasks SET checkpoint = $3 WHERE id = $1 AND claimed_by = $2 AND status = 'processing'",
        [id, runner, value],
      );
    },
    async addUpstreamAttempt(id, runner) {
      const { rows } = await query<{ upstream_attempts: number }>(
        pool,
        `UPDATE video_tasks SET upstream_attempts = upstream_attempts + 1
         WHERE id = $1 AND claimed_by = $2 AND status = 'processing' RETURNING upstream_attempts`,
        [id, runner],
      );
      return rows[0]?.upstream_attempts;
    },
    complete: (id, runner, result) =>
      changed(
        `UPDATE video_tasks SET status = 'completed', progress = 100, video_blob = $3, thumbnail_blob = $4,
         completed_at = $5, expires_at = $6, claimed_by = NULL, lease_until = NULL
         WHERE id = $1 AND claimed_by = $2 AND status = 'processing'`,
        [id, runner, result.videoBlob, result.thumbnailBlob, result.now, result.expiresAt],
      ),
    fail: (id, runner, error) =>
      changed(
        `UPDATE video_tasks SET status = 'failed', error_code = $3, error_message = $4, completed_at = $5,
         claimed_by = NULL, lease_until = NULL WHERE id = $1 AND claimed_by = $2 AND status = 'processing'`,
        [id, runner, error.code, error.message, error.now],
      ),
    release: (id, runner, runAfter, options = {}) =>
      changed(
        `UPDATE video_tasks SET status = 'queued', claimed_by = NULL, lease_until = NULL, run_after = $3,
         attempts = attempts - $4 WHERE id = $1 AND claimed_by = $2 AND status = 'processing'`,
        [id, runner, runAfter, options.refundAttempt ? 1 : 0],
      ),
    async delete(id, keyId) {
      return transaction(pool, async (client) => {
        const { rows } = await client.query<TaskRow>(
          'DELETE FROM video_tasks WHERE id = $1 AND key_id = $2 RETURNING *',
          [id, keyId],
        );
        if (rows[0]) {
          await client.query('DELETE FROM video_remixes WHERE video_id = $1', [id]);
        }
        return rows[0] ? toTask(rows[0]) : undefined;
      });
    },
    async setRemixedFrom(id, originalId) {
      await query(
        pool,
        'INSERT INTO video_remixes (video_id, remixed_from) VALUES ($1, $2) ON CONFLICT (video_id) DO UPDATE SET remixed_from = EXCLUDED.remixed_from',
        [id, originalId],
      );
    },
    async remixedFrom(id) {
      const { rows } = await query<{ remixed_from: string }>(
        pool,
        'SELECT remixed_from FROM video_remixes WHERE video_id = $1',
        [id],
      );
      return rows[0]?.remixed_from ?? null;
    },
    async countByStatus() {
      const { rows } = await query<{ status: VideoStatus; count: number }>(
        pool,
        'SELECT status, count(*) AS count FROM video_tasks GROUP BY status',
      );
      return Object.fromEntries(rows.map((row) => [row.status, row.count]));
    },
  };
}
