/**
 * Usage records on PostgreSQL: the same records, cursors and filters as the SQLite store. A batch from the
 * recorder is one multi-row INSERT (parameters bound, chunked below PostgreSQL's 65,535-parameter limit), into
 * the day partitions `usage-partitions.ts` keeps ahead. Listing by key, request id and time is indexed on every
 * partition.
 */
import type { MediaUsage } from '../../core/models.js';
import type { UsageEntry, UsageRecord, UsageStore } from '../usage-store.js';
import { type PgPool, query, transaction } from './pool.js';
import { createUsagePartitions, type UsagePartitions } from './usage-partitions.js';

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
  media: MediaUsage | null;
  status: number;
  latency_ms: number;
  created_at: number;
  deployment: string | null;
  attempts: number | null;
  cost_usd: number;
  search_deployment: string | null;
  search_attempts: number | null;
}

const ID_PREFIX = 'usage_';
const COLUMNS = [
  'request_id',
  'key_id',
  'operation',
  'model_requested',
  'model',
  'provider',
  'input_tokens',
  'output_tokens',
  'cached_input_tokens',
  'cache_write_tokens',
  'reasoning_tokens',
  'units',
  'media',
  'status',
  'latency_ms',
  'created_at',
  'deployment',
  'attempts',
  'cost_usd',
  'search_deployment',
  'search_attempts',
];
/** Rows per INSERT: 21 parameters each, well under the 65,535 a statement may bind. */
const ROWS_PER_INSERT = 1_000;

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
    media: row.media,
    status: row.status,
    latencyMs: row.latency_ms,
    createdAt: row.created_at,
    deployment: row.deployment,
    attempts: row.attempts,
    costUsd: row.cost_usd,
    searchDeployment: row.search_deployment,
    searchAttempts: row.search_attempts,
  };
}

function cursorSeq(after: string): number {
  // Clamped: a cursor past bigint would be a database error, not an empty page.
  const seq = after.startsWith(ID_PREFIX) ? Number.parseInt(after.slice(ID_PREFIX.length), 10) || 0 : 0;
  return Math.max(0, Math.min(seq, Number.MAX_SAFE_INTEGER));
}

function valuesOf(entry: UsageEntry): unknown[] {
  return [
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
    entry.media === null ? null : JSON.stringify(entry.media),
    entry.status,
    entry.latencyMs,
    entry.createdAt,
    entry.deployment ?? null,
    entry.attempts ?? null,
    entry.costUsd ?? 0,
    entry.searchDeployment ?? null,
    entry.searchAttempts ?? null,
  ];
}

export interface PostgresUsageStore extends UsageStore {
  partitions: UsagePartitions;
}

export function createPostgresUsageStore(pool: PgPool): PostgresUsageStore {
  const partitions = createUsagePartitions(pool);
  /** The batch as multi-row INSERTs, after making sure its days' partitions exist. */
  async function insertRows(entries: UsageEntry[]): Promise<void> {
    await partitions.ensure(entries.map((entry) => entry.createdAt));
    // One transaction: a batch is written whole or not at all, so a retry never writes a record twice.
    await transaction(pool, async (client) => {
      for (let start = 0; start < entries.length; start += ROWS_PER_INSERT) {
        const chunk = entries.slice(start, start + ROWS_PER_INSERT);
        const values: unknown[] = [];
        const rows = chunk.map((entry) => {
          const first = values.length;
          values.push(...valuesOf(entry));
          return `(${COLUMNS.map((_, index) => `$${first + index + 1}`).join(', ')})`;
        });
        await client.query(`INSERT INTO usage_records (${COLUMNS.join(', ')}) VALUES ${rows.join(', ')}`, values);
      }
    });
  }

  return {
    partitions,
    async insertMany(entries) {
      if (entries.length === 0) {
        return;
      }
      try {
        await insertRows(entries);
      } catch (error) {
        // 23514: no partition for a row's day (another instance's retention dropped one this instance knew).
        if ((error as { code?: string }).code !== '23514') {
          throw error;
        }
        partitions.forget();
        await insertRows(entries);
      }
    },
    async amendMedia(requestId, amount) {
      const result = await query(
        pool,
        `UPDATE usage_records SET units = COALESCE($1, units), media = COALESCE($2, media), deployment = COALESCE($4, deployment),
           provider = COALESCE($5, provider), attempts = COALESCE($6, attempts) WHERE request_id = $3`,
        [
          amount.units ?? null,
          amount.media ? JSON.stringify(amount.media) : null,
          requestId,
          amount.placed?.deployment ?? null,
          amount.placed?.provider ?? null,
          amount.placed?.attempts ?? null,
        ],
      );
      return (result.rowCount ?? 0) > 0;
    },
    async list(request) {
      const values: unknown[] = [request.keyId];
      const where = ['key_id = $1'];
      const bind = (value: unknown) => {
        values.push(value);
        return `$${values.length}`;
      };
      if (request.requestId !== undefined) {
        where.push(`request_id = ${bind(request.requestId)}`);
      }
      if (request.model !== undefined) {
        const model = bind(request.model);
        where.push(`(model = ${model} OR model_requested = ${model})`);
      }
      if (request.since !== undefined) {
        where.push(`created_at >= ${bind(request.since)}`);
      }
      if (request.until !== undefined) {
        where.push(`created_at < ${bind(request.until)}`);
      }
      if (request.after !== undefined) {
        where.push(`seq ${request.order === 'asc' ? '>' : '<'} ${bind(cursorSeq(request.after))}`);
      }
      const direction = request.order === 'asc' ? 'ASC' : 'DESC';
      const { rows } = await query<UsageRow>(
        pool,
        `SELECT * FROM usage_records WHERE ${where.join(' AND ')} ORDER BY seq ${direction} LIMIT ${bind(request.limit + 1)}`,
        values,
      );
      return { records: rows.slice(0, request.limit).map(toRecord), hasMore: rows.length > request.limit };
    },
    async summary(request) {
      const values: unknown[] = [];
      const where: string[] = [];
      const bind = (value: unknown) => {
        values.push(value);
        return `$${values.length}`;
      };
      if (request.keyIds !== undefined) {
        if (request.keyIds.length === 0) {
          return [];
        }
        where.push(`key_id = ANY(${bind(request.keyIds)}::text[])`);
      }
      if (request.since !== undefined) {
        where.push(`created_at >= ${bind(request.since)}`);
      }
      if (request.until !== undefined) {
        where.push(`created_at < ${bind(request.until)}`);
      }
      const group = {
        day: "to_char(to_timestamp(created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD')",
        model: "COALESCE(model, model_requested, '')",
        key: "COALESCE(key_id, '')",
      }[request.groupBy];
      const { rows } = await query<Record<string, string | number>>(
        pool,
        `SELECT ${group} AS "group", COUNT(*) AS requests, COALESCE(SUM(input_tokens), 0) AS input_tokens,
           COALESCE(SUM(output_tokens), 0) AS output_tokens, COALESCE(SUM(units), 0) AS media_units,
           COALESCE(SUM(cost_usd), 0) AS cost_usd
         FROM usage_records ${where.length ? `WHERE ${where.join(' AND ')}` : ''} GROUP BY 1 ORDER BY 1`,
        values,
      );
      // COUNT and SUM of BIGINT come back as NUMERIC text.
      return rows.map((row) => ({
        group: String(row.group),
        requests: Number(row.requests),
        inputTokens: Number(row.input_tokens),
        outputTokens: Number(row.output_tokens),
        mediaUnits: Number(row.media_units),
        costUsd: Number(row.cost_usd),
      }));
    },
  };
}
