/**
 * The blob store with its rows on PostgreSQL: the bytes stay files in a directory (the SQLite store's layout:
 * written to a temporary name and renamed into place before the row is inserted), the rows are shared by every
 * instance. With several instances the directory must be one they share (a volume); each instance sweeps only
 * files that have no row and are older than a grace period, so a file another instance has just renamed into
 * place, before its row is committed, is not taken for debris.
 *
 * A put with an owner checks the owner's quota and inserts the row in one transaction under the key's quota
 * lock (the file store takes the same lock), so two puts finishing together cannot both pass the quota.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, mkdirSync, readdirSync, statSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobMeta, BlobStore } from '../blob-store.js';
import { QUOTA_LOCK_SQL } from './file-store.js';
import { type PgPool, query, transaction } from './pool.js';

interface BlobRow {
  id: string;
  media_type: string;
  size: number;
  created_at: number;
  expires_at: number | null;
}

const ID_PATTERN = /^[a-z]+_[0-9A-Za-z]{8,64}$/;
/** Files without a row younger than this are left alone at start: another instance may be about to insert it. */
const SWEEP_GRACE_MS = 10 * 60_000;

function newId(prefix: string): string {
  const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  let text = '';
  for (const byte of randomBytes(26)) {
    text += alphabet[byte % 62];
  }
  return `${prefix}_${text}`;
}

function toMeta(row: BlobRow): BlobMeta {
  return {
    id: row.id,
    mediaType: row.media_type,
    size: row.size,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}

const INSERT =
  'INSERT INTO blobs (id, media_type, size, created_at, expires_at, key_id) VALUES ($1, $2, $3, $4, $5, $6)';

/** Answers the store once the directory has been swept of files without a row. */
export async function createPostgresBlobStore(pool: PgPool, directory: string): Promise<BlobStore> {
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  const fileOf = (id: string) => path.join(directory, id);
  const { rows: known } = await query<{ id: string }>(pool, 'SELECT id FROM blobs');
  const ids = new Set(known.map((row) => row.id));
  for (const name of readdirSync(directory)) {
    const file = path.join(directory, name);
    if (!ids.has(name) && Date.now() - statSync(file).mtimeMs > SWEEP_GRACE_MS) {
      void rm(file, { force: true });
    }
  }

  async function get(id: string): Promise<BlobMeta | undefined> {
    if (!ID_PATTERN.test(id)) {
      return undefined;
    }
    const { rows } = await query<BlobRow>(pool, 'SELECT * FROM blobs WHERE id = $1', [id]);
    return rows[0] ? toMeta(rows[0]) : undefined;
  }

  async function deleteIds(idsToDelete: string[]): Promise<void> {
    for (const id of idsToDelete) {
      await query(pool, 'DELETE FROM blobs WHERE id = $1', [id]); // the row first: once it is gone nobody is handed the file
      await rm(fileOf(id), { force: true });
    }
  }

  return {
    async stage(source, options) {
      const id = newId(options.prefix);
      const temporary = path.join(directory, `.${id}.partial`);
      const hash = createHash('sha256');
      let size = 0;
      const meter = new Transform({
        transform(chunk: Buffer, _encoding, callback) {
          try {
            size += chunk.length;
            options.check?.(size);
            options.observe?.(chunk);
            hash.update(chunk);
            callback(null, chunk);
          } catch (error) {
            callback(error as Error);
          }
        },
      });
      try {
        await pipeline(source, meter, createWriteStream(temporary, { mode: 0o600, flags: 'wx' }));
      } catch (error) {
        await rm(temporary, { force: true });
        throw error;
      }
      let state: 'staged' | 'committed' | 'discarded' = 'staged';
      return {
        id,
        size,
        sha256: hash.digest('hex'),
        async commit(commitOptions) {
          if (state !== 'staged') {
            throw new Error(`staged blob ${id} is already ${state}`);
          }
          const meta: BlobMeta = {
            id,
            mediaType: commitOptions.mediaType,
            size,
            createdAt: Math.floor((commitOptions.now ?? Date.now()) / 1000),
            expiresAt: commitOptions.expiresAt,
          };
          await rename(temporary, fileOf(id));
          state = 'committed';
          try {
            await query(pool, INSERT, [meta.id, meta.mediaType, meta.size, meta.createdAt, meta.expiresAt, null]);
          } catch (error) {
            await rm(fileOf(id), { force: true });
            throw error;
          }
          return meta;
        },
        async discard() {
          if (state === 'staged') {
            state = 'discarded';
            await rm(temporary, { force: true });
          }
        },
      };
    },
    async put(bytes, options) {
      const meta: BlobMeta = {
        id: newId(options.prefix),
        mediaType: options.mediaType,
        size: bytes.byteLength,
        createdAt: Math.floor((options.now ?? Date.now()) / 1000),
        expiresAt: options.expiresAt,
      };
      const temporary = path.join(directory, `.${meta.id}.partial`);
      await writeFile(temporary, bytes, { mode: 0o600, flag: 'wx' });
      await rename(temporary, fileOf(meta.id));
      try {
        await transaction(pool, async (client) => {
          if (options.owner) {
            await client.query(QUOTA_LOCK_SQL, [options.owner.keyId]);
          }
          await options.owner?.admit?.(meta.size);
          await client.query(INSERT, [
            meta.id,
            meta.mediaType,
            meta.size,
            meta.createdAt,
            meta.expiresAt,
            options.owner?.keyId ?? null,
          ]);
        });
      } catch (error) {
        await rm(fileOf(meta.id), { force: true });
        throw error;
      }
      return meta;
    },
    async heldBytes(keyId, nowSeconds) {
      const { rows } = await query<{ bytes: number | null }>(
        pool,
        'SELECT SUM(size) AS bytes FROM blobs WHERE key_id = $1 AND (expires_at IS NULL OR expires_at > $2)',
        [keyId, nowSeconds],
      );
      return rows[0]?.bytes ?? 0;
    },
    get,
    async open(id, range) {
      return (await get(id))
        ? createReadStream(fileOf(id), range ? { start: range.start, end: range.end } : undefined)
        : undefined;
    },
    async delete(id) {
      if (!(await get(id))) {
        return false;
      }
      await deleteIds([id]);
      return true;
    },
    async purge(now) {
      let total = 0;
      for (;;) {
        const { rows } = await query<{ id: string }>(
          pool,
          'SELECT id FROM blobs WHERE expires_at IS NOT NULL AND expires_at <= $1 LIMIT 1000',
          [now],
        );
        if (rows.length === 0) {
          return total;
        }
        await deleteIds(rows.map((row) => row.id));
        total += rows.length;
      }
    },
  };
}
