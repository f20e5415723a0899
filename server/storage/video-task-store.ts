/**
 * Video tasks as rows: the durable queue behind `POST /v1/videos`. A runner claims a task with a lease
 * (`claimed_by`, `lease_until`) and renews it while it works; a task whose runner died (kill -9, a crash) is
 * claimable again once its lease has run out, so nothing is lost with the process. Claiming is one statement:
 * on SQLite, where one writer at a time holds the database, `UPDATE … WHERE id = (SELECT … LIMIT 1) RETURNING`
 * is atomic.
 *
 * No key can take the queue: `createWithin` refuses a key's task past its cap of queued and running tasks (in
 * the same transaction as the insert), and a claim takes the oldest runnable task of the key with the fewest
 * tasks running, and among those the key claimed from least recently (`claim_order`, a counter stamped on each
 * claim): round-robin across keys, so a key with one task waits behind at most one task of each other key.
 *
 * Times are milliseconds since the epoch (leases and backoff need better than seconds); the contract's seconds
 * are derived when a task is shown.
 */
import { randomId } from '../core/random-id.js';
import type { SqliteDatabase } from './database.js';

export type VideoStatus = 'queued' | 'processing' | 'completed' | 'failed';

export interface VideoTask {
  id: string;
  keyId: string;
  /** The `x-svc-request-id` of the create call, whose usage record gets the seconds when the task completes. */
  requestId: string;
  model: string;
  prompt: string;
  seconds: number;
  width: number;
  height: number;
  /** A blob holding the input reference image, if one was given. */
  inputBlob: string | null;
  status: VideoStatus;
  progress: number;
  /** Queue runs: claims of the task (a shutdown's hand-back refunds its claim). */
  attempts: number;
  /**
   * Upstream attempts of a model with deployments, summed over the queue runs (each counted as it starts, so
   * a run whose process died still counts); the create call's usage record shows this sum.
   */
  upstreamAttempts: number;
  /** Not claimable before this time (backoff after a transient failure). */
  runAfter: number;
  claimedBy: string | null;
  leaseUntil: number | null;
  /** The model's own resume point (an upstream job id). */
  checkpoint: string | null;
  videoBlob: string | null;
  thumbnailBlob: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  createdAt: number;
  completedAt: number | null;
  expiresAt: number | null;
  seq: number;
  /** Stamped from a counter on each claim, so the claim statement knows which key was served least recently. */
  claimOrder: number | null;
}

export type NewVideoTask = Pick<
  VideoTask,
  'keyId' | 'requestId' | 'model' | 'prompt' | 'seconds' | 'width' | 'height' | 'inputBlob'
>;

/**
 * The `inputBlob` of a task whose input image is still being stored after the create was answered: the task is
 * inserted not runnable before a grace time, and `attachInput` makes it runnable with the real blob. A runner
 * that finds this value (the process died before storing it) fails the task.
 */
export const PENDING_INPUT_BLOB = 'pending';

export interface VideoTaskPage {
  tasks: VideoTask[];
  hasMore: boolean;
}

export type CreateVideoTaskOutcome = { task: VideoTask } | { refused: { active: number } };

export interface VideoTaskStore {
  create(task: NewVideoTask, now: number): Promise<VideoTask>;
  /** Inserts the task unless its key already has `maxActive` tasks queued or processing (checked atomically with the insert). */
  createWithin(
    task: NewVideoTask,
    now: number,
    maxActive: number,
    options?: { runAfter?: number },
  ): Promise<CreateVideoTaskOutcome>;
  /** Gives a queued task with a PENDING_INPUT_BLOB its stored image and makes it runnable; false when it is gone. */
  attachInput(id: string, inputBlob: string, now: number): Promise<boolean>;
  /** Fails a task no runner holds (its input image could not be stored); false when it is gone or running. */
  failQueued(id: string, error: { code: string; message: string; now: number }): Promise<boolean>;
  /** The key's tasks queued or processing. */
  activeCount(keyId: string): Promise<number>;
  /** The key's own task; another key's id reads as unknown. */
  get(id: string, keyId: string): Promise<VideoTask | undefined>;
  list(query: { keyId: string; after?: string; limit: number; order: 'asc' | 'desc' }): Promise<VideoTaskPage>;
  /**
   * Claims a runnable task (queued and due, or processing with an expired lease), fairly across keys: the key
   * with the fewest tasks running first, then the key claimed from least recently, then its oldest task.
   */
  claim(runner: string, now: number, leaseMs: number): Promise<VideoTask | undefined>;
  /** Extends the lease; false when the task is no longer this runner's (taken over, or finished). */
  renew(id: string, runner: string, now: number, leaseMs: number): Promise<boolean>;
  setProgress(id: string, runner: string, progress: number): Promise<void>;
  setCheckpoint(id: string, runner: string, checkpoint: string): Promise<void>;
  /** Counts one upstream attempt; the task's sum after it, or undefined when the task is no longer this runner's. */
  addUpstreamAttempt(id: string, runner: string): Promise<number | undefined>;
  complete(
    id: string,
    runner: string,
    result: { videoBlob: string; thumbnailBlob: string | null; now: number; expiresAt: number },
  ): Promise<boolean>;
  fail(id: string, runner: string, error: { code: string; message: string; now: number }): Promise<boolean>;
  /** Back to the queue (a transient failure, or a shutdown), claimable from `runAfter`. */
  release(id: string, runner: string, runAfter: number, options?: { refundAttempt?: boolean }): Promise<boolean>;
  /** Deletes the key's own task, whatever its status, and answers the row it was (its blobs are the caller's to delete). */
  delete(id: string, keyId: string): Promise<VideoTask | undefined>;
  /** Records that `id` remixes `originalId` (`POST /v1/videos/{id}/remix`). */
  setRemixedFrom(id: string, originalId: string): Promise<void>;
  /** The task `id` remixes, if it is a remix. */
  remixedFrom(id: string): Promise<string | null>;
  /** How many tasks are in each state (for metrics; one grouped count over the table). */
  countByStatus(): Promise<Partial<Record<VideoStatus, number>>>;
}

/** A `video_tasks` row as both backends read it. */
export interface TaskRow {
  id: string;
  key_id: string;
  request_id: string;
  model: string;
  prompt: string;
  seconds: number;
  width: number;
  height: number;
  input_blob: string | null;
  status: VideoStatus;
  progress: number;
  attempts: number;
  upstream_attempts: number;
  run_after: number;
  claimed_by: string | null;
  lease_until: number | null;
  checkpoint: string | null;
  video_blob: string | null;
  thumbnail_blob: string | null;
  error_code: string | null;
  error_message: string | null;
  created_at: number;
  completed_at: number | null;
  expires_at: number | null;
  seq: number;
  claim_order: number | null;
}

export function toTask(row: TaskRow): VideoTask {
  return {
    id: row.id,
    keyId: row.key_id,
    requestId: row.request_id,
    model: row.model,
    prompt: row.prompt,
    seconds: row.seconds,
    width: row.width,
    height: row.height,
    inputBlob: row.input_blob,
    status: row.status,
    progress: row.progress,
    attempts: row.attempts,
    upstreamAttempts: row.upstream_attempts,
    runAfter: row.run_after,
    claimedBy: row.claimed_by,
    leaseUntil: row.lease_until,
    checkpoint: row.checkpoint,
    videoBlob: row.video_blob,
    thumbnailBlob: row.thumbnail_blob,
    errorCode: row.error_code,
    errorMessage: row.error_message,
    createdAt: row.created_at,
    completedAt: row.completed_at,
    expiresAt: row.expires_at,
    seq: row.seq,
    claimOrder: row.claim_order,
  };
}

export function createVideoTaskStore(db: SqliteDatabase): VideoTaskStore {
  db.exec(`CREATE TABLE IF NOT EXISTS video_tasks (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    key_id TEXT NOT NULL,
    request_id TEXT NOT NULL,
    model TEXT NOT NULL,
    prompt TEXT NOT NULL,
    seconds INTEGER NOT NULL,
    width INTEGER NOT NULL,
    height INTEGER NOT NULL,
    input_blob TEXT,
    status TEXT NOT NULL CHECK (status IN ('queued', 'processing', 'completed', 'failed')),
    progress INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0,
    run_after INTEGER NOT NULL,
    claimed_by TEXT,
    lease_until INTEGER,
    checkpoint TEXT,
    video_blob TEXT,
    thumbnail_blob TEXT,
    error_code TEXT,
    error_message TEXT,
    created_at INTEGER NOT NULL,
    completed_at INTEGER,
    expires_at INTEGER,
    claim_order INTEGER,
    upstream_attempts INTEGER NOT NULL DEFAULT 0
  )`);
  // Databases made before fair claiming lack the column; adding it is the whole migration (NULL: never claimed).
  // Likewise the upstream attempts (0: none counted).
  const taskColumns = db.prepare('PRAGMA table_info(video_tasks)').all() as Array<{ name: string }>;
  if (!taskColumns.some((column) => column.name === 'claim_order')) {
    db.exec('ALTER TABLE video_tasks ADD COLUMN claim_order INTEGER');
  }
  if (!taskColumns.some((column) => column.name === 'upstream_attempts')) {
    db.exec('ALTER TABLE video_tasks ADD COLUMN upstream_attempts INTEGER NOT NULL DEFAULT 0');
  }
  db.exec(`CREATE INDEX IF NOT EXISTS video_tasks_by_key ON video_tasks (key_id, seq);
  CREATE INDEX IF NOT EXISTS video_tasks_runnable ON video_tasks (status, run_after) WHERE status IN ('queued', 'processing');
  CREATE INDEX IF NOT EXISTS video_tasks_key_claims ON video_tasks (key_id, claim_order);
  CREATE INDEX IF NOT EXISTS video_tasks_active_by_key ON video_tasks (key_id, status) WHERE status IN ('queued', 'processing');
  CREATE INDEX IF NOT EXISTS video_tasks_claims ON video_tasks (claim_order) WHERE claim_order IS NOT NULL`);

  const insert =
    db.prepare(`INSERT INTO video_tasks (id, key_id, request_id, model, prompt, seconds, width, height, input_blob, status, run_after, created_at)
    VALUES (@id, @keyId, @requestId, @model, @prompt, @seconds, @width, @height, @inputBlob, 'queued', @runAfter, @now) RETURNING *`);
  const attachInput = db.prepare(`UPDATE video_tasks SET input_blob = @inputBlob, run_after = @now
    WHERE id = @id AND status = 'queued' AND input_blob = '${PENDING_INPUT_BLOB}'`);
  const failQueued =
    db.prepare(`UPDATE video_tasks SET status = 'failed', error_code = @code, error_message = @message, completed_at = @now
    WHERE id = @id AND status = 'queued'`);
  const byId = db.prepare<[string, string], TaskRow>('SELECT * FROM video_tasks WHERE id = ? AND key_id = ?');
  // The head of each key's runnable tasks, ordered by how much of the runners the key holds now, then by how
  // long ago it was last served: round-robin across keys, in one statement so two runners never take one task.
  const claim = db.prepare<{ runner: string; now: number; leaseUntil: number }, TaskRow>(`UPDATE video_tasks
    SET status = 'processing', claimed_by = @runner, lease_until = @leaseUntil, attempts = attempts + 1,
      claim_order = (SELECT COALESCE(MAX(claim_order), 0) + 1 FROM video_tasks)
    WHERE id = (
      SELECT head.id FROM (
        SELECT id, key_id, MIN(seq) AS seq FROM video_tasks
        WHERE (status = 'queued' AND run_after <= @now) OR (status = 'processing' AND lease_until < @now)
        GROUP BY key_id
      ) AS head
      ORDER BY
        (SELECT COUNT(*) FROM video_tasks AS held WHERE held.key_id = head.key_id AND held.status = 'processing' AND held.lease_until >= @now),
        COALESCE((SELECT MAX(served.claim_order) FROM video_tasks AS served WHERE served.key_id = head.key_id), 0),
        head.seq
      LIMIT 1
    )
    RETURNING *`);
  const active = db.prepare<[string], { count: number }>(
    `SELECT COUNT(*) AS count FROM video_tasks WHERE key_id = ? AND status IN ('queued', 'processing')`,
  );
  const renew = db.prepare(
    `UPDATE video_tasks SET lease_until = @leaseUntil WHERE id = @id AND claimed_by = @runner AND status = 'processing'`,
  );
  const progress = db.prepare(
    `UPDATE video_tasks SET progress = @progress WHERE id = @id AND claimed_by = @runner AND status = 'processing' AND progress < @progress`,
  );
  const checkpoint = db.prepare(
    `UPDATE video_tasks SET checkpoint = @checkpoint WHERE id = @id AND claimed_by = @runner AND status = 'processing'`,
  );
  const upstreamAttempt = db
    .prepare<{ id: string; runner: string }, number>(
      `UPDATE video_tasks SET upstream_attempts = upstream_attempts + 1
       WHERE id = @id AND claimed_by = @runner AND status = 'processing' RETURNING upstream_attempts`,
    )
    .pluck();
  const complete =
    db.prepare(`UPDATE video_tasks SET status = 'completed', progress = 100, video_blob = @videoBlob, thumbnail_blob = @thumbnailBlob,
    completed_at = @now, expires_at = @expiresAt, claimed_by = NULL, lease_until = NULL
    WHERE id = @id AND claimed_by = @runner AND status = 'processing'`);
  const fail =
    db.prepare(`UPDATE video_tasks SET status = 'failed', error_code = @code, error_message = @message, completed_at = @now,
    claimed_by = NULL, lease_until = NULL
    WHERE id = @id AND claimed_by = @runner AND status = 'processing'`);
  const release =
    db.prepare(`UPDATE video_tasks SET status = 'queued', claimed_by = NULL, lease_until = NULL, run_after = @runAfter,
    attempts = attempts - @refund
    WHERE id = @id AND claimed_by = @runner AND status = 'processing'`);

  const countByStatus = db.prepare<[], { status: VideoStatus; count: number }>(
    'SELECT status, count(*) AS count FROM video_tasks GROUP BY status',
  );
  const insertTask = (task: NewVideoTask, now: number, runAfter = now): VideoTask =>
    toTask(insert.get({ ...task, id: randomId('video'), now, runAfter }) as TaskRow);
  const activeCount = (keyId: string): number => active.get(keyId)?.count ?? 0;
  const createWithin = db.transaction(
    (
      task: NewVideoTask,
      now: number,
      maxActive: number,
      options: { runAfter?: number } = {},
    ): CreateVideoTaskOutcome => {
      const current = activeCount(task.keyId);
      return current >= maxActive
        ? { refused: { active: current } }
        : { task: insertTask(task, now, options.runAfter) };
    },
  );

  return {
    create: async (task, now) => insertTask(task, now),
    createWithin: async (task, now, maxActive, options) => createWithin(task, now, maxActive, options),
    async attachInput(id, inputBlob, now) {
      return attachInput.run({ id, inputBlob, now }).changes === 1;
    },
    async countByStatus() {
      return Object.fromEntries(countByStatus.all().map((row) => [row.status, row.count]));
    },
    async failQueued(id, error) {
      return failQueued.run({ id, ...error }).changes === 1;
    },
    activeCount: async (keyId) => activeCount(keyId),
    async get(id, keyId) {
      const row = byId.get(id, keyId);
      return row ? toTask(row) : undefined;
    },
    async list({ keyId, after, limit, order }) {
      const cursor =
        after === undefined
          ? undefined
          : (db
              .prepare<[string, string], { seq: number }>('SELECT seq FROM video_tasks WHERE id = ? AND key_id = ?')
              .get(after, keyId)?.seq ?? null);
      if (cursor === null) {
        return { tasks: [], hasMore: false }; // an unknown cursor continues nothing
      }
      const direction = order === 'asc' ? 'ASC' : 'DESC';
      const comparison = order === 'asc' ? '>' : '<';
      const rows = db
        .prepare<unknown[], TaskRow>(
          `SELECT * FROM video_tasks WHERE key_id = ?${cursor === undefined ? '' : ` AND seq ${comparison} ?`} ORDER BY seq ${direction} LIMIT ?`,
        )
        .all(...(cursor === undefined ? [keyId, limit + 1] : [keyId, cursor, limit + 1]));
      return { tasks: rows.slice(0, limit).map(toTask), hasMore: rows.length > limit };
    },
    async claim(runner, now, leaseMs) {
      const row = claim.get({ runner, now, leaseUntil: now + leaseMs });
      return row ? toTask(row) : undefined;
    },
    async renew(id, runner, now, leaseMs) {
      return renew.run({ id, runner, leaseUntil: now + leaseMs }).changes === 1;
    },
    async setProgress(id, runner, value) {
      progress.run({ id, runner, progress: Math.max(0, Math.min(99, Math.round(value))) });
    },
    async setCheckpoint(id, runner, value) {
      checkpoint.run({ id, runner, checkpoint: value });
    },
    async addUpstreamAttempt(id, runner) {
      return upstreamAttempt.get({ id, runner });
    },
    async complete(id, runner, result) {
      return complete.run({ id, runner, ...result }).changes === 1;
    },
    async fail(id, runner, error) {
      return fail.run({ id, runner, code: error.code, message: error.message, now: error.now }).changes === 1;
    },
    async release(id, runner, runAfter, options = {}) {
      return release.run({ id, runner, runAfter, refund: options.refundAttempt ? 1 : 0 }).changes === 1;
    },
    ...deletionAndRemixes(db),
  };
}

/**
 * Deleting tasks and remembering remixes. The remix link is a table of its own rather than a column: a link is
 * written once and read when a task is shown, and the task rows (and their claim statement) stay as they are.
 */
function deletionAndRemixes(db: SqliteDatabase): Pick<VideoTaskStore, 'delete' | 'setRemixedFrom' | 'remixedFrom'> {
  db.exec(
    'CREATE TABLE IF NOT EXISTS video_remixes (video_id TEXT PRIMARY KEY, remixed_from TEXT NOT NULL) WITHOUT ROWID',
  );
  const deleteTask = db.prepare<[string, string], TaskRow>(
    'DELETE FROM video_tasks WHERE id = ? AND key_id = ? RETURNING *',
  );
  const deleteLink = db.prepare('DELETE FROM video_remixes WHERE video_id = ?');
  const setLink = db.prepare('INSERT OR REPLACE INTO video_remixes (video_id, remixed_from) VALUES (?, ?)');
  const getLink = db.prepare<[string], string>('SELECT remixed_from FROM video_remixes WHERE video_id = ?').pluck();
  const remove = db.transaction((id: string, keyId: string) => {
    const row = deleteTask.get(id, keyId);
    if (row) {
      deleteLink.run(id);
    }
    return row;
  });
  return {
    async delete(id, keyId) {
      const row = remove(id, keyId);
      return row ? toTask(row) : undefined;
    },
    async setRemixedFrom(id, originalId) {
      setLink.run(id, originalId);
    },
    async remixedFrom(id) {
      return getLink.get(id) ?? null;
    },
  };
}
