/**
 * The local search index on PostgreSQL full-text search: a stored `tsvector` per passage (title weighted A,
 * body D, English stemming like the SQLite store's porter tokenizer) under a GIN index. The match expression
 * the search index hands over (`"word" OR "word"`, from safe-match.ts) is read by `websearch_to_tsquery`,
 * which accepts any text without a syntax error; NUL, which PostgreSQL text cannot hold, is removed first, so
 * no query string raises a database error. Ranking is `ts_rank_cd` (title four times a body match, as the
 * SQLite store weights bm25), snippets come from `ts_headline`; the hits have the SQLite store's shape.
 */
import { type IndexedFile, type PassageHit, type PassageStore, rankByVector, vectorBytes } from '../passage-store.js';
import { type PgPool, query, transaction } from './pool.js';

/** {D, C, B, A}: the body (D) a quarter of the title (A). */
const WEIGHTS = '{0.25, 0.25, 0.25, 1.0}';
const HEADLINE_OPTIONS = "StartSel='', StopSel='', MaxWords=32, MinWords=12, MaxFragments=1, FragmentDelimiter='…'";
/** Passages per INSERT (6 parameters each). */
const ROWS_PER_INSERT = 1_000;

/** What websearch_to_tsquery is given: any text, less the NUL PostgreSQL cannot take. */
export function tsQueryText(match: string): string {
  return match.replaceAll('\u0000', ' ');
}

/** Inserts passages numbered from `firstSeq`, ROWS_PER_INSERT to a statement. */
async function insertPassages(
  client: { query(text: string, values: unknown[]): Promise<unknown> },
  file: IndexedFile,
  passages: string[],
  firstSeq: number,
  now: number,
): Promise<void> {
  for (let start = 0; start < passages.length; start += ROWS_PER_INSERT) {
    const values: unknown[] = [];
    const rows = passages.slice(start, start + ROWS_PER_INSERT).map((body, offset) => {
      const first = values.length;
      values.push(file.fileId, file.keyId, firstSeq + start + offset, tsQueryText(file.title), tsQueryText(body), now);
      return `($${first + 1}, $${first + 2}, $${first + 3}, $${first + 4}, $${first + 5}, $${first + 6})`;
    });
    await client.query(
      `INSERT INTO search_passages (file_id, key_id, seq, title, body, indexed_at) VALUES ${rows.join(', ')}`,
      values,
    );
  }
}

export function createPostgresPassageStore(pool: PgPool): PassageStore {
  return {
    async replace(file, passages, now) {
      await transaction(pool, async (client) => {
        await client.query('DELETE FROM search_passages WHERE file_id = $1', [file.fileId]);
        await insertPassages(client, file, passages, 0, now);
      });
    },
    async append(file, passages, firstSeq, now) {
      // Through `query`, so a connection failure reads as DatabaseUnavailableError like every statement's.
      await insertPassages({ query: (text, values) => query(pool, text, values) }, file, passages, firstSeq, now);
    },
    async remove(fileId) {
      await query(pool, 'DELETE FROM search_passages WHERE file_id = $1', [fileId]);
    },
    async search({ keyId, match, limit }) {
      const { rows } = await query<PassageHit>(
        pool,
        `SELECT p.file_id AS "fileId", p.title, p.body AS passage, p.indexed_at AS "indexedAt",
                ts_headline('english', p.body, q.query, $4) AS snippet,
                ts_rank_cd($5, p.document, q.query) AS score
         FROM search_passages p, websearch_to_tsquery('english', $1) AS q(query)
         WHERE p.key_id = $2 AND p.document @@ q.query
         ORDER BY score DESC, p.id
         LIMIT $3`,
        [tsQueryText(match), keyId, limit, HEADLINE_OPTIONS, WEIGHTS],
      );
      return rows;
    },
    async count(keyId) {
      const { rows } = await query<{ n: number }>(pool, 'SELECT count(*) AS n FROM search_passages WHERE key_id = $1', [
        keyId,
      ]);
      return rows[0]!.n; // count(*) returns one row
    },
    async unembedded(model, limit) {
      const { rows } = await query<{ id: string; title: string; text: string }>(
        pool,
        `SELECT p.id, p.title, p.body AS text FROM search_passages p
         LEFT JOIN search_passage_vectors v ON v.passage_id = p.id
         WHERE v.passage_id IS NULL OR v.model <> $1
         ORDER BY p.id LIMIT $2`,
        [model, limit],
      );
      return rows.map((row) => ({ id: Number(row.id), title: row.title, text: row.text }));
    },
    async claimUnembedded(model, limit, now, until, afterId = 0) {
      // Rows another statement is claiming are skipped (SKIP LOCKED); a claim committed after this statement's
      // snapshot is still seen by the upsert's guard, which re-reads the row it conflicts with.
      const { rows } = await query<{ id: string; keyId: string; title: string; text: string }>(
        pool,
        `WITH candidates AS (
           SELECT p.id FROM search_passages p
           LEFT JOIN search_passage_vectors v ON v.passage_id = p.id
           LEFT JOIN search_passage_embed_claims c ON c.passage_id = p.id
           WHERE p.id > $5 AND (v.passage_id IS NULL OR v.model <> $1)
             AND (c.passage_id IS NULL OR c.until_ms <= $3 OR c.model <> $1)
           ORDER BY p.id LIMIT $2
           FOR UPDATE OF p SKIP LOCKED
         ), claimed AS (
           INSERT INTO search_passage_embed_claims (passage_id, model, until_ms)
           SELECT id, $1, $4 FROM candidates
           ON CONFLICT (passage_id) DO UPDATE SET model = EXCLUDED.model, until_ms = EXCLUDED.until_ms
           WHERE search_passage_embed_claims.until_ms <= $3 OR search_passage_embed_claims.model <> $1
           RETURNING passage_id
         )
         SELECT p.id, p.key_id AS "keyId", p.title, p.body AS text
         FROM search_passages p JOIN claimed ON claimed.passage_id = p.id ORDER BY p.id`,
        [model, limit, now, until, afterId],
      );
      return rows.map((row) => ({ id: Number(row.id), keyId: row.keyId, title: row.title, text: row.text }));
    },
    async releaseClaims(ids) {
      if (ids.length > 0) {
        await query(pool, 'DELETE FROM search_passage_embed_claims WHERE passage_id = ANY($1::bigint[])', [ids]);
      }
    },
    async storeVectors(model, rows) {
      if (rows.length === 0) {
        return;
      }
      await query(pool, 'DELETE FROM search_passage_embed_claims WHERE passage_id = ANY($1::bigint[])', [
        rows.map((row) => row.id),
      ]);
      // A passage removed meanwhile is skipped (the join), not a foreign-key error.
      await query(
        pool,
        `INSERT INTO search_passage_vectors (passage_id, model, vector)
         SELECT p.id, $1, v.vector FROM unnest($2::bigint[], $3::bytea[]) AS v(id, vector)
         JOIN search_passages p ON p.id = v.id
         ON CONFLICT (passage_id) DO UPDATE SET model = EXCLUDED.model, vector = EXCLUDED.vector`,
        [model, rows.map((row) => row.id), rows.map((row) => vectorBytes(row.vector))],
      );
    },
    async nearest({ keyId, model, vector, limit }) {
      const { rows } = await query<{
        fileId: string;
        title: string;
        passage: string;
        indexedAt: string;
        vector: Buffer;
      }>(
        pool,
        `SELECT p.file_id AS "fileId", p.title, p.body AS passage, p.indexed_at AS "indexedAt", v.vector
         FROM search_passage_vectors v JOIN search_passages p ON p.id = v.passage_id
         WHERE p.key_id = $1 AND v.model = $2`,
        [keyId, model],
      );
      return rankByVector(
        rows.map((row) => ({ ...row, indexedAt: Number(row.indexedAt) })),
        vector,
        limit,
      );
    },
  };
}
