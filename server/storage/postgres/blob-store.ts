/**
 * The blob store with its rows on PostgreSQL, shared by every instance; the bytes go where the shared blob
 * store (../blob-store.ts) puts them: this instance's directory by default, or the byte store
 * `OMNIGATE_BLOB_URL` names (a directory the instances share, or S3), which is what several instances need.
 *
 * A put with an owner's quota takes the key's quota lock (the file store's insert takes the same one), then
 * inserts the row only when the key's live files and owned blobs plus this blob fit, all in one transaction on
 * one connection: two puts (or a put and an upload) finishing together in two instances cannot both pass.
 */
import {
  type BlobMeta,
  type BlobRow,
  type BlobRows,
  type BlobStore,
  createBlobStoreOn,
  type SharedBlobBytes,
  toMeta,
} from '../blob-store.js';
import { HELD_BYTES_SQL, QUOTA_LOCK_SQL } from './file-store.js';
import { type PgPool, query, transaction } from './pool.js';

const INSERT =
  'INSERT INTO blobs (id, media_type, size, created_at, expires_at, key_id) VALUES ($1, $2, $3, $4, $5, $6)';
/** Ids a sweep asks about in one statement. */
const EXISTING_BATCH = 1000;

function values(meta: BlobMeta, keyId: string | null) {
  return [meta.id, meta.mediaType, meta.size, meta.createdAt, meta.expiresAt, keyId];
}

export function postgresBlobRows(pool: PgPool): BlobRows {
  return {
    async insert(meta, owner, nowSeconds) {
      if (owner?.maxBytes === undefined) {
        await query(pool, INSERT, values(meta, owner?.keyId ?? null));
        return {};
      }
      const { keyId, maxBytes } = owner;
      return transaction(pool, async (client) => {
        await client.query(QUOTA_LOCK_SQL, [keyId]);
        const { rows } = await client.query<{ bytes: number }>(HELD_BYTES_SQL, [keyId, nowSeconds]);
        const held = rows[0]?.bytes ?? 0;
        if (held + meta.size > maxBytes) {
          return { refused: { held } };
        }
        await client.query(INSERT, values(meta, keyId));
        return {};
      });
    },
    async get(id) {
      const { rows } = await query<BlobRow>(pool, 'SELECT * FROM blobs WHERE id = $1', [id]);
      return rows[0] ? toMeta(rows[0]) : undefined;
    },
    async remove(id) {
      await query(pool, 'DELETE FROM blobs WHERE id = $1', [id]);
    },
    async expired(now, limit) {
      const { rows } = await query<{ id: string }>(
        pool,
        'SELECT id FROM blobs WHERE expires_at IS NOT NULL AND expires_at <= $1 LIMIT $2',
        [now, limit],
      );
      return rows.map((row) => row.id);
    },
    async heldBytes(keyId, nowSeconds) {
      const { rows } = await query<{ bytes: number | null }>(
        pool,
        'SELECT SUM(size) AS bytes FROM blobs WHERE key_id = $1 AND (expires_at IS NULL OR expires_at > $2)',
        [keyId, nowSeconds],
      );
      return rows[0]?.bytes ?? 0;
    },
    async existing(ids) {
      const found = new Set<string>();
      for (let start = 0; start < ids.length; start += EXISTING_BATCH) {
        const { rows } = await query<{ id: string }>(pool, 'SELECT id FROM blobs WHERE id = ANY($1)', [
          ids.slice(start, start + EXISTING_BATCH),
        ]);
        for (const row of rows) {
          found.add(row.id);
        }
      }
      return found;
    },
  };
}

/** A string is this instance's own directory; otherwise the shared byte store and the local staging directory. */
export function createPostgresBlobStore(pool: PgPool, storage: string | SharedBlobBytes): BlobStore {
  return createBlobStoreOn(postgresBlobRows(pool), storage);
}
