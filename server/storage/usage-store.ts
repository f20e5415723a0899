/**
 * Usage records: one row per API call, keyed by the request id the caller saw in `x-svc-request-id`.
 * Rows are written in batches by `usage/usage-recorder.ts`, never on the request path.
 */
import type { MediaUsage } from '../core/models.js';
import type { Statement } from 'better-sqlite3';
import type { SqliteDatabase } from './database.js';
import { writeWhenFree } from './write-when-free.js';

export interface UsageEntry {
  requestId: string;
  keyId: string | null;
  operation: string;
  modelRequested: string | null;
  model: string | null;
  provider: string | null;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  /** Media units (seconds, images, characters) for non-text operations. */
  units: number | null;
  /** What a media call produced, per modality; null for text operations. */
  media: MediaUsage | null;
  /** What the call cost in USD, by the price table (limits/prices.ts); 0 for a model without a price. */
  costUsd?: number;
  status: number;
  latencyMs: number;
  /** Unix seconds. */
  createdAt: number;
  /** The deployment that served the call (models with deployments, retries or fallbacks); null otherwise. */
  deployment?: string | null;
  /** Upstream attempts the retry layer made; null when it was not involved. */
  attempts?: number | null;
  /** The same for the search step of a search answer (`deployment`/`attempts` are its writing model's). */
  searchDeployment?: string | null;
  searchAttempts?: number | null;
}

export interface UsageRecord extends UsageEntry {
  id: string;
}

export interface UsageQuery {
  keyId: string;
  requestId?: string;
  model?: string;
  since?: number;
  until?: number;
  after?: string;
  limit: number;
  order: 'asc' | 'desc';
}

/** A spend summary's filter and grouping (`GET /v1/usage/summary`, the admin API's spend). */
export interface UsageSummaryQuery {
  /** Only these keys' records; undefined for every key's. */
  keyIds?: string[];
  since?: number;
  until?: number;
  /** `day` is the record's UTC date (YYYY-MM-DD); `model` the resolved model, else the requested one, else ''. */
  groupBy: 'day' | 'model' | 'key';
}

/** One group's totals. */
export interface UsageSummaryRow {
  group: string;
  requests: number;
  inputTokens: number;
  outputTokens: number;
  mediaUnits: number;
  costUsd: number;
}

export interface UsageStore {
  /** Writes the entries together (one transaction, one multi-row statement where the backend has it). */
  insertMany(entries: UsageEntry[]): Promise<void>;
  /**
   * Sets what a call produced after it answered (a video task that completed later), and where it was made
   * when the retry layer placed it (`placed`: the deployment, its provider, the upstream attempts); false if no record.
   */
  amendMedia(requestId: string, amount: UsageAmendment): Promise<boolean>;
  /** One page of the key's own records and whether more follow. */
  list(query: UsageQuery): Promise<{ records: UsageRecord[]; hasMore: boolean }>;
  /** Totals per group (one GROUP BY), ordered by group. */
  summary(query: UsageSummaryQuery): Promise<UsageSummaryRow[]>;
}

/**
 * What a call's record learns after it answered: a video task's seconds, and the deployment that made it (a
 * failed task's record gets `placed` alone: its units and media stay as they were).
 */
export interface UsageAmendment {
  units?: number;
  media?: MediaUsage;
  placed?: { deployment: string | null; provider: string | null; attempts: number };
}

interface UsageRow {
  seq: number;
  request_id: string;
  key_id: string | null;
  operation: string;
  model_requested: string | null;
  model: string | null;
  provider: string | null;
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
  cache_write_tokens: number;
  reasoning_tokens: number;
  units: number | null;
  media: string | null;
  cost_usd: number | null;
  status: number;
  latency_ms: number;
  created_at: number;
  deployment: string | null;
  attempts: number | null;
  search_deployment: string | null;
  search_attempts: number | null;
}

const ID_PREFIX = 'usage_';
const ROWS_PER_INSERT = 100;

function toRecord(row: UsageRow): UsageRecord {
  return {
    id: `${ID_PREFIX}${row.seq}`,
    requestId: row.request_id,
    keyId: row.key_id,
    operation: row.operation,
    modelRequested: row.model_requested,
    model: row.model,
    provider: row.provider,
    inputTokens: row.input_tokens,
    outputTokens: row.output_tokens,
    cachedInputTokens: row.cached_input_tokens,
    cacheWriteTokens: row.cache_write_tokens,
    reasoningTokens: row.reasoning_tokens,
    units: row.units,
    media: row.media === null ? null : (JSON.parse(row.media) as MediaUsage),
    costUsd: row.cost_usd ?? 0,
    status: row.status,
    latencyMs: row.latency_ms,
    createdAt: row.created_at,
    deployment: row.deployment,
    attempts: row.attempts,
    searchDeployment: row.search_deployment,
    searchAttempts: row.search_attempts,
  };
}

/** Parses a `usage_<n>` cursor; anything else matches nothing rather than failing. */
function cursorSeq(after: string): number {
  return after.startsWith(ID_PREFIX) ? Number.parseInt(after.slice(ID_PREFIX.length), 10) || 0 : 0;
}

export function createUsageStore(db: SqliteDatabase): UsageStore {
  db.exec(`CREATE TABLE IF NOT EXISTS usage_records (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    request_id TEXT NOT NULL,
    key_id TEXT,
    operation TEXT NOT NULL,
    model_requested TEXT,
    model TEXT,
    provider TEXT,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cached_input_tokens INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens INTEGER NOT NULL DEFAULT 0,
    units REAL,
    status INTEGER NOT NULL,
    latency_ms INTEGER NOT NULL,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX IF NOT EXISTS usage_by_key ON usage_records (key_id, seq);
  CREATE INDEX IF NOT EXISTS usage_by_request ON usage_records (request_id)`);
  // Databases made before media usage existed gain the column; their old rows read as null.
  const columns = db.prepare('PRAGMA table_info(usage_records)').all() as Array<{ name: string }>;
  if (!columns.some((column) => column.name === 'media')) {
    db.exec('ALTER TABLE usage_records ADD COLUMN media TEXT');
  }
  // The retry layer's columns (providers/resilience/): null on rows of calls it did not run.
  if (!columns.some((column) => column.name === 'deployment')) {
    db.exec('ALTER TABLE usage_records ADD COLUMN deployment TEXT');
    db.exec('ALTER TABLE usage_records ADD COLUMN attempts INTEGER');
  }
  // And the search step's of a search answer.
  if (!columns.some((column) => column.name === 'search_deployment')) {
    db.exec('ALTER TABLE usage_records ADD COLUMN search_deployment TEXT');
    db.exec('ALTER TABLE usage_records ADD COLUMN search_attempts INTEGER');
  }
  // Likewise the cost: rows written before prices existed read as 0.
  if (!columns.some((column) => column.name === 'cost_usd')) {
    db.exec('ALTER TABLE usage_records ADD COLUMN cost_usd REAL NOT NULL DEFAULT 0');
  }

  // Rows go in as multi-row INSERTs of up to ROWS_PER_INSERT rows (21 parameters a row, well under SQLite's
  // 32,766), the statements of a batch in one transaction: one statement step per 100 rows, not per row.
  const COLUMNS = `request_id, key_id, operation, model_requested, model, provider, input_tokens, output_tokens,
    cached_input_tokens, cache_write_tokens, reasoning_tokens, units, media, status, latency_ms, created_at, deployment, attempts, cost_usd,
    search_deployment, search_attempts`;
  const ROW = `(${Array(21).fill('?').join(', ')})`;
  const statements = new Map<number, Statement>();
  const insertOf = (rows: number) => {
    let statement = statements.get(rows);
    if (!statement) {
      statement = db.prepare(`INSERT INTO usage_records (${COLUMNS}) VALUES ${Array(rows).fill(ROW).join(', ')}`);
      statements.set(rows, statement);
    }
    return statement;
  };
  const valuesOf = (entry: UsageEntry) => [
    entry.requestId,
    entry.keyId,
    entry.operation,
    entry.modelRequested,
    entry.model,
    entry.provider,
    entry.inputTokens,
    entry.outputTokens,
    entry.cachedInputTokens,
    entry.cacheWriteTokens,
    entry.reasoningTokens,
    entry.units,
    entry.media ? JSON.stringify(entry.media) : null,
    entry.status,
    entry.latencyMs,
    entry.createdAt,
    entry.deployment ?? null,
    entry.attempts ?? null,
    entry.costUsd ?? 0,
    entry.searchDeployment ?? null,
    entry.searchAttempts ?? null,
  ];
  const insertAll = db.transaction((entries: UsageEntry[]) => {
    for (let start = 0; start < entries.length; start += ROWS_PER_INSERT) {
      const rows = entries.slice(start, start + ROWS_PER_INSERT);
      insertOf(rows.length).run(rows.flatMap(valuesOf));
    }
  });

  const amend = db.prepare(
    `UPDATE usage_records SET units = COALESCE(@units, units), media = COALESCE(@media, media), deployment = COALESCE(@deployment, deployment),
       provider = COALESCE(@provider, provider), attempts = COALESCE(@attempts, attempts) WHERE request_id = @requestId`,
  );

  return {
    async amendMedia(requestId, amount) {
      return (
        amend.run({
          requestId,
          units: amount.units ?? null,
          media: amount.media ? JSON.stringify(amount.media) : null,
          deployment: amount.placed?.deployment ?? null,
          provider: amount.placed?.provider ?? null,
          attempts: amount.placed?.attempts ?? null,
        }).changes > 0
      );
    },
    async insertMany(entries) {
      if (entries.length > 0) {
        // A batch of records is nobody's answer: it waits for a lock held elsewhere without sleeping the loop.
        await writeWhenFree(db, () => insertAll(entries));
      }
    },
    async list(query) {
      const where = ['key_id = @keyId'];
      const params: Record<string, unknown> = { keyId: query.keyId, limit: query.limit + 1 };
      if (query.requestId !== undefined) {
        where.push('request_id = @requestId');
        params.requestId = query.requestId;
      }
      if (query.model !== undefined) {
        where.push('(model = @model OR model_requested = @model)');
        params.model = query.model;
      }
      if (query.since !== undefined) {
        where.push('created_at >= @since');
        params.since = query.since;
      }
      if (query.until !== undefined) {
        where.push('created_at < @until');
        params.until = query.until;
      }
      if (query.after !== undefined) {
        where.push(query.order === 'asc' ? 'seq > @after' : 'seq < @after');
        params.after = cursorSeq(query.after);
      }
      const direction = query.order === 'asc' ? 'ASC' : 'DESC';
      const rows = db
        .prepare<Record<string, unknown>, UsageRow>(
          `SELECT * FROM usage_records WHERE ${where.join(' AND ')} ORDER BY seq ${direction} LIMIT @limit`,
        )
        .all(params);
      const hasMore = rows.length > query.limit;
      return { records: rows.slice(0, query.limit).map(toRecord), hasMore };
    },
    async summary(query) {
      const where: string[] = [];
      const params: unknown[] = [];
      if (query.keyIds !== undefined) {
        if (query.keyIds.length === 0) {
          return [];
        }
        where.push(`key_id IN (${query.keyIds.map(() => '?').join(', ')})`);
        params.push(...query.keyIds);
      }
      if (query.since !== undefined) {
        where.push('created_at >= ?');
        params.push(query.since);
      }
      if (query.until !== undefined) {
        where.push('created_at < ?');
        params.push(query.until);
      }
      const group = {
        day: "strftime('%Y-%m-%d', created_at, 'unixepoch')",
        model: "COALESCE(model, model_requested, '')",
        key: "COALESCE(key_id, '')",
      }[query.groupBy];
      return db
        .prepare<unknown[], UsageSummaryRow>(
          `SELECT ${group} AS "group", COUNT(*) AS requests, COALESCE(SUM(input_tokens), 0) AS inputTokens,
             COALESCE(SUM(output_tokens), 0) AS outputTokens, COALESCE(SUM(units), 0) AS mediaUnits,
             COALESCE(SUM(cost_usd), 0) AS costUsd
           FROM usage_records ${where.length ? `WHERE ${where.join(' AND ')}` : ''} GROUP BY 1 ORDER BY 1`,
        )
        .all(...params);
    },
  };
}
