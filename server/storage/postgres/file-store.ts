import { randomId } from '../../core/random-id.js';
import { type FileHoldings, type FileRow, type FileStore, initialIndexingLease, toFile } from '../file-store.js';
import { type PgPool, type Queryable, query, transaction } from './pool.js';

/**
 * The lock of one key's storage quota, held to the end of the transaction: an upload's insert and an owned
 * blob's insert take it before reading what the key holds, so instances insert for one key one at a time.
 */
export const QUOTA_LOCK_SQL = "SELECT pg_advisory_xact_lock(hashtext('omnigate quota ' || $1))";

/** Everything key $1 stores at $2 (unix seconds): its live files and the live blobs kept for it, in one read. */
export const HELD_BYTES_SQL = `SELECT
  COALESCE((SELECT SUM(bytes) FROM files WHERE key_id = $1 AND (expires_at IS NULL OR expires_at > $2)), 0)
  + COALESCE((SELECT SUM(size) FROM blobs WHERE key_id = $1 AND (expires_at IS NULL OR expires_at > $2)), 0) AS bytes,
  (SELECT COUNT(*) FROM files WHERE key_id = $1 AND (expires_at IS NULL OR expires_at > $2)) AS count`;

/** Files on PostgreSQL; a key's byte quota covers its files and its generated media (the blobs it owns). */
export function createPostgresFileStore(pool: PgPool): FileStore {
  async function held(runner: Queryable, keyId: string, now: number): Promise<FileHoldings> {
    const { rows } = await runner.query<{ bytes: number; count: number }>(HELD_BYTES_SQL, [keyId, now]);
    return { bytes: rows[0]?.bytes ?? 0, count: rows[0]?.count ?? 0 };
  }

  return {
    async create(file, quota, now) {
      return transaction(pool, async (client) => {
        await client.query(QUOTA_LOCK_SQL, [file.keyId]);
        const current = await held(client, file.keyId, now);
        if (current.count + 1 > quota.maxCount) {
          return { refused: 'count' as const, holdings: current };
        }
        if (current.bytes + file.bytes > quota.maxBytes) {
          return { refused: 'bytes' as const, holdings: current };
        }
        const { rows } = await client.query<FileRow>(
          `INSERT INTO files (id, key_id, blob_id, filename, purpose, bytes, sha256, media_type, created_at, expires_at, index_status, index_reason, index_code, index_lease_until)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING *`,
          [
            randomId('file', '-'),
            file.keyId,
            file.blobId,
            file.filename,
            file.purpose,
            file.bytes,
            file.sha256,
            file.mediaType,
            file.createdAt,
            file.expiresAt,
            file.indexing?.status ?? null,
            file.indexing?.reason ?? null,
            file.indexing?.code ?? null,
            initialIndexingLease(file, now),
          ],
        );
        return { file: toFile(rows[0]!) }; // an INSERT … RETURNING that succeeded returns its row
      });
    },
    async get(id, keyId, now) {
      const { rows } = await query<FileRow>(
        pool,
        'SELECT * FROM files WHERE id = $1 AND key_id = $2 AND (expires_at IS NULL OR expires_at > $3)',
        [id, keyId, now],
      );
      return rows[0] ? toFile(rows[0]) : undefined;
    },
    async list({ keyId, purpose, after, limit, order, now }) {
      let cursor: number | undefined;
      if (after !== undefined) {
        const { rows } = await query<{ seq: number }>(pool, 'SELECT seq FROM files WHERE id = $1 AND key_id = $2', [
          after,
          keyId,
        ]);
        if (!rows[0]) {
          return { files: [], hasMore: false }; // an unknown cursor continues nothing
        }
        cursor = rows[0].seq;
      }
      const values: unknown[] = [keyId, now];
      const conditions = ['key_id = $1', '(expires_at IS NULL OR expires_at > $2)'];
      if (purpose !== undefined) {
        values.push(purpose);
        conditions.push(`purpose = $${values.length}`);
      }
      if (cursor !== undefined) {
        values.push(cursor);
        conditions.push(`seq ${order === 'asc' ? '>' : '<'} $${values.length}`);
      }
      values.push(limit + 1);
      const { rows } = await query<FileRow>(
        pool,
        `SELECT * FROM files WHERE ${conditions.join(' AND ')} ORDER BY seq ${order === 'asc' ? 'ASC' : 'DESC'} LIMIT $${values.length}`,
        values,
      );
      return { files: rows.slice(0, limit).map(toFile), hasMore: rows.length > limit };
    },
    async delete(id, keyId) {
      const { rows } = await query<FileRow>(pool, 'DELETE FROM files WHERE id = $1 AND key_id = $2 RETURNING *', [
        id,
        keyId,
      ]);
      return rows[0] ? toFile(rows[0]) : undefined;
    },
    holdings: (keyId, now) => held({ query: (text, values) => query(pool, text, values) }, keyId, now),
    async takeExpired(now, limit) {
      const { rows } = await query<FileRow>(
        pool,
        `DELETE FROM files WHERE id IN (
           SELECT id FROM files WHERE expires_at IS NOT NULL AND expires_at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED
         ) RETURNING *`,
        [now, limit],
      );
      return rows.map(toFile);
    },
    async setIndexing(id, { status, reason, code }) {
      const result = await query(
        pool,
        'UPDATE files SET index_status = $2, index_reason = $3, index_code = $4, index_lease_until = NULL WHERE id = $1',
        [id, status, reason ?? null, code ?? null],
      );
      return (result.rowCount ?? 0) > 0;
    },
    async renewIndexing(ids, until) {
      if (ids.length > 0) {
        await query(pool, "UPDATE files SET index_lease_until = $2 WHERE id = ANY($1) AND index_status = 'indexing'", [
          ids,
          until,
        ]);
      }
    },
    async abandonIndexing({ status, reason, code }, now) {
      const result = await query(
        pool,
        `UPDATE files SET index_status = $1, index_reason = $2, index_code = $3, index_lease_until = NULL
         WHERE index_status = 'indexing' AND (index_lease_until IS NULL OR index_lease_until < $4)`,
        [status, reason ?? null, code ?? null, now],
      );
      return result.rowCount ?? 0;
    },
  };
}
