/**
 * Stored bytes that outlive one answer (generated images and music behind signed links, uploaded files):
 * each blob's bytes are kept by a byte store (bytes/byte-store.ts: a directory under the data directory by
 * default, a shared directory or S3-compatible object storage), its metadata one database row. This file holds
 * what both backends share — ids, staging, the order of bytes and rows, the sweep, the purge —
 * (`createBlobStoreOn`, over a backend's `BlobRows`) and the SQLite rows (`createBlobStore`); the PostgreSQL
 * rows are postgres/blob-store.ts. The bytes are complete under their key before the row is inserted, so a
 * reader never sees a half-written blob.
 *
 * At start the local directory (the default blob directory, or the staging directory of a shared store) is
 * swept of files without a row that are older than `SWEEP_GRACE_MS`: a crash between bytes and row, or an
 * upload cut off by one. Younger files are left alone, since another process on the same data directory (a
 * worker of `--workers N`) may be between its bytes and its row right now. A shared store is never swept
 * (another instance's blob may be between its bytes and its row); a crash there can leave an orphan object,
 * which costs space but is never served. Blobs with an expiry are deleted by `purge()`.
 *
 * Large bytes arriving over time (an upload) are `stage`d instead: streamed to a local temporary file while
 * their SHA-256 and size are taken, and only `commit`ted (moved to the byte store, row inserted) once the caller
 * has checked what it must; `discard` removes a staged file that was not committed, so a refused or cut-off
 * upload leaves nothing. Staging stays local whatever the byte store: the size limit and the sniffing act on
 * the bytes as they come, a refused upload never reaches shared storage, and a slow client holds a local file
 * rather than an open multipart upload. In the default directory the staged file is renamed into place; for
 * another store it is copied there (streamed) and removed.
 *
 * Bytes kept for a key (generated media, a video and its input image) are `put` with an `owner`: the row names
 * the key and `heldBytes` sums the key's live ones for its storage quota. With the owner's `quota`, the row is
 * inserted only when the key's live files and owned blobs plus this blob fit — decided by the database in the
 * same transaction as the insert (SQLite: an immediate transaction, which holds the write lock from the first
 * read; PostgreSQL: the key's quota lock, which the file store's insert takes too), so two puts finishing
 * together, in one process or in two instances, cannot both pass. Uploads carry no owner here: their file row
 * (storage/file-store.ts) counts them.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import type { ByteStore } from './bytes/byte-store.js';
import { createDirectoryByteStore } from './bytes/directory-byte-store.js';
import { writeNewFile } from './bytes/write-new-file.js';
import type { SqliteDatabase } from './database.js';

export interface BlobMeta {
  id: string;
  mediaType: string;
  size: number;
  /** Unix seconds. */
  createdAt: number;
  /** Unix seconds; null keeps the blob until it is deleted. */
  expiresAt: number | null;
}

/** Bytes streamed to a temporary file, not yet a blob: nobody can read them until `commit`. */
export interface StagedBlob {
  /** The id the blob will have once committed. */
  id: string;
  size: number;
  /** Lowercase hex. */
  sha256: string;
  commit(options: { mediaType: string; expiresAt: number | null; now?: number }): Promise<BlobMeta>;
  /** Removes the temporary file; does nothing once committed or already discarded. */
  discard(): Promise<void>;
}

export interface StageOptions {
  prefix: string;
  /** Sees every chunk as it passes (media type sniffing), before it is written. */
  observe?(chunk: Uint8Array): void;
  /** Called with the running size after each chunk; throwing stops the write (a size limit) and is rethrown. */
  check?(size: number): void;
}

/** Whose quota a put blob counts against, and the quota it must fit in. */
export interface BlobOwner {
  keyId: string;
  /**
   * The key's storage quota: the row is inserted only when the key's live files and owned blobs plus this blob
   * fit in `maxBytes` (checked atomically with the insert); otherwise the put rejects with `refuse(heldBytes)`.
   */
  quota?: { maxBytes: number; refuse(heldBytes: number): Error };
}

export interface BlobStore {
  /** Streams `source` to a temporary file; rejects (with nothing left on disk) when the source fails or `check` throws. */
  stage(source: Readable, options: StageOptions): Promise<StagedBlob>;
  /** Rejects, with nothing left in the byte store, when the owner's quota refuses it. */
  put(
    bytes: Uint8Array,
    options: { prefix: string; mediaType: string; expiresAt: number | null; now?: number; owner?: BlobOwner },
  ): Promise<BlobMeta>;
  /** The bytes of the key's owned blobs not expired at `nowSeconds`. */
  heldBytes(keyId: string, nowSeconds: number): Promise<number>;
  get(id: string): Promise<BlobMeta | undefined>;
  /** The blob's bytes (or the inclusive byte range) as a stream; undefined when it does not exist. */
  open(id: string, range?: { start: number; end: number }): Promise<Readable | undefined>;
  delete(id: string): Promise<boolean>;
  /** Deletes every blob expired at `now` (unix seconds); returns how many. */
  purge(now: number): Promise<number>;
  /** Settles when the start's sweep of the local directory has finished (tests). */
  readonly swept: Promise<void>;
}

/** A put's owner as the rows see it: the key, and its quota when there is one. */
export interface RowOwner {
  keyId: string;
  maxBytes?: number;
}

/** What a backend keeps of blobs: their rows. Every method may reject with the backend's errors. */
export interface BlobRows {
  /**
   * Inserts the row. With `owner.maxBytes`, only when the key's live files and owned blobs (at `nowSeconds`)
   * plus this blob fit, atomically with the insert; `{ refused }` carries what the key holds then.
   */
  insert(meta: BlobMeta, owner: RowOwner | undefined, nowSeconds: number): Promise<{ refused?: { held: number } }>;
  get(id: string): Promise<BlobMeta | undefined>;
  remove(id: string): Promise<void>;
  /** Up to `limit` ids of blobs expired at `now`. */
  expired(now: number, limit: number): Promise<string[]>;
  heldBytes(keyId: string, nowSeconds: number): Promise<number>;
  /** Which of these ids have a row. */
  existing(ids: string[]): Promise<Set<string>>;
}

/** A blobs row as both backends read it. */
export interface BlobRow {
  id: string;
  media_type: string;
  size: number;
  created_at: number;
  expires_at: number | null;
}

export function toMeta(row: BlobRow): BlobMeta {
  return {
    id: row.id,
    mediaType: row.media_type,
    size: row.size,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}

/** Ids are `<prefix>_` + 26 base62 characters: 150 random bits, and only characters safe in a file name and a URL. */
function newId(prefix: string): string {
  const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  const bytes = randomBytes(26);
  let text = '';
  for (const byte of bytes) {
    text += alphabet[byte % 62];
  }
  return `${prefix}_${text}`;
}

export const BLOB_ID_PATTERN = /^[a-z]+_[0-9A-Za-z]{8,64}$/;

/**
 * Local files without a row younger than this are left alone at start: another process on the same data
 * directory may be about to insert the row. An upload being staged writes its file as it arrives, so its
 * modification time stays fresh.
 */
export const SWEEP_GRACE_MS = 10 * 60_000;

/** Bytes kept by a store other instances may share, with uploads staged in a local directory of this instance's. */
export interface SharedBlobBytes {
  bytes: ByteStore;
  stagingDirectory: string;
}

/**
 * Removes from `directory` what is older than the grace period and no blob's: temporaries (dot-names) always,
 * blob-named files only when `rowsKept` (the directory holds the bytes themselves) and they have no row.
 */
async function sweep(directory: string, rows: BlobRows, rowsKept: boolean, nowMs: number): Promise<void> {
  const old: string[] = [];
  for (const name of await readdir(directory)) {
    const info = await stat(path.join(directory, name)).catch(() => undefined);
    if (info?.isFile() && nowMs - info.mtimeMs > SWEEP_GRACE_MS) {
      old.push(name);
    }
  }
  const candidates = old.filter((name) => rowsKept && BLOB_ID_PATTERN.test(name));
  const kept = candidates.length > 0 ? await rows.existing(candidates) : new Set<string>();
  for (const name of old) {
    if (!kept.has(name) && (name.startsWith('.') || rowsKept || !BLOB_ID_PATTERN.test(name))) {
      await rm(path.join(directory, name), { force: true });
    }
  }
}

/**
 * The blob store over a backend's rows. A string is this instance's own directory (the default): the bytes are
 * files in it and uploads are staged in it. Otherwise the bytes go to the given byte store and uploads are
 * staged in `stagingDirectory`. The caller closes a byte store it gave.
 */
export function createBlobStoreOn(rows: BlobRows, storage: string | SharedBlobBytes): BlobStore {
  const shared = typeof storage !== 'string';
  const bytes = shared ? storage.bytes : createDirectoryByteStore(storage);
  const directory = shared ? storage.stagingDirectory : storage;
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  // Best effort: a sweep that fails (the database not up yet) leaves the files for the next start.
  const swept = sweep(directory, rows, !shared, Date.now()).catch(() => {});

  const get = async (id: string) => (BLOB_ID_PATTERN.test(id) ? rows.get(id) : undefined);

  async function insert(meta: BlobMeta, owner: BlobOwner | undefined, nowMs: number): Promise<void> {
    const outcome = await rows.insert(
      meta,
      owner ? { keyId: owner.keyId, maxBytes: owner.quota?.maxBytes } : undefined,
      Math.floor(nowMs / 1000),
    );
    if (outcome.refused) {
      throw owner?.quota?.refuse(outcome.refused.held) ?? new Error('the blob row was refused');
    }
  }

  async function deleteIds(ids: string[]): Promise<void> {
    for (const id of ids) {
      await rows.remove(id); // the row first: once it is gone nobody is handed the bytes
      await bytes.delete(id);
    }
  }

  return {
    swept,
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
        await writeNewFile(temporary, source, meter);
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
          const nowMs = commitOptions.now ?? Date.now();
          const meta: BlobMeta = {
            id,
            mediaType: commitOptions.mediaType,
            size,
            createdAt: Math.floor(nowMs / 1000),
            expiresAt: commitOptions.expiresAt,
          };
          await bytes.putFile(id, temporary);
          state = 'committed';
          try {
            await insert(meta, undefined, nowMs);
          } catch (error) {
            await bytes.delete(id);
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
    async put(data, options) {
      const nowMs = options.now ?? Date.now();
      const meta: BlobMeta = {
        id: newId(options.prefix),
        mediaType: options.mediaType,
        size: data.byteLength,
        createdAt: Math.floor(nowMs / 1000),
        expiresAt: options.expiresAt,
      };
      await bytes.put(meta.id, data);
      try {
        await insert(meta, options.owner, nowMs);
      } catch (error) {
        await bytes.delete(meta.id);
        throw error;
      }
      return meta;
    },
    heldBytes: (keyId, nowSeconds) => rows.heldBytes(keyId, nowSeconds),
    get,
    async open(id, range) {
      return (await get(id)) ? bytes.open(id, range) : undefined;
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
        const ids = await rows.expired(now, 1000);
        if (ids.length === 0) {
          return total;
        }
        await deleteIds(ids);
        total += ids.length;
      }
    },
  };
}

export interface SqliteBlobStoreOptions {
  /** The key's bytes held outside the blobs table (its live files), for an owner's quota; read in the insert's transaction. */
  otherHeldBytes?(keyId: string, nowSeconds: number): number;
}

/** The SQLite blob store, which also answers `heldBytes` synchronously (for the file store's quota transaction). */
export interface SqliteBlobStore extends BlobStore {
  heldBytesNow(keyId: string, nowSeconds: number): number;
}

/** The blob store with its rows in SQLite. */
export function createBlobStore(
  db: SqliteDatabase,
  storage: string | SharedBlobBytes,
  options: SqliteBlobStoreOptions = {},
): SqliteBlobStore {
  db.exec(`CREATE TABLE IF NOT EXISTS blobs (
    id TEXT PRIMARY KEY,
    media_type TEXT NOT NULL,
    size INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER,
    key_id TEXT
  )`);
  // Databases made before blobs had owners lack the column; their blobs count against nobody's quota.
  if (
    !(db.prepare('PRAGMA table_info(blobs)').all() as Array<{ name: string }>).some(
      (column) => column.name === 'key_id',
    )
  ) {
    db.exec('ALTER TABLE blobs ADD COLUMN key_id TEXT');
  }
  db.exec(`CREATE INDEX IF NOT EXISTS blobs_by_expiry ON blobs (expires_at) WHERE expires_at IS NOT NULL;
  CREATE INDEX IF NOT EXISTS blobs_by_owner ON blobs (key_id) WHERE key_id IS NOT NULL`);
  const insertRow = db.prepare(
    'INSERT INTO blobs (id, media_type, size, created_at, expires_at, key_id) VALUES (@id, @mediaType, @size, @createdAt, @expiresAt, @keyId)',
  );
  const held = db.prepare<{ keyId: string; now: number }, { bytes: number | null }>(
    'SELECT SUM(size) AS bytes FROM blobs WHERE key_id = @keyId AND (expires_at IS NULL OR expires_at > @now)',
  );
  const select = db.prepare<[string], BlobRow>('SELECT * FROM blobs WHERE id = ?');
  const remove = db.prepare('DELETE FROM blobs WHERE id = ?');
  const expired = db.prepare<[number, number], { id: string }>(
    'SELECT id FROM blobs WHERE expires_at IS NOT NULL AND expires_at <= ? LIMIT ?',
  );
  const heldBytesNow = (keyId: string, nowSeconds: number) => held.get({ keyId, now: nowSeconds })?.bytes ?? 0;
  // Immediate: the write lock is taken before the quota is read, so a process sharing the file (a worker of
  // `--workers N`, a second instance) cannot insert between this read and this insert.
  const insertWithin = db.transaction((meta: BlobMeta, owner: RowOwner | undefined, nowSeconds: number) => {
    if (owner?.maxBytes !== undefined) {
      const current = heldBytesNow(owner.keyId, nowSeconds) + (options.otherHeldBytes?.(owner.keyId, nowSeconds) ?? 0);
      if (current + meta.size > owner.maxBytes) {
        return { refused: { held: current } };
      }
    }
    insertRow.run({ ...meta, keyId: owner?.keyId ?? null });
    return {};
  });
  const rows: BlobRows = {
    async insert(meta, owner, nowSeconds) {
      return insertWithin.immediate(meta, owner, nowSeconds);
    },
    async get(id) {
      const row = select.get(id);
      return row ? toMeta(row) : undefined;
    },
    async remove(id) {
      remove.run(id);
    },
    async expired(now, limit) {
      return expired.all(now, limit).map((row) => row.id);
    },
    async heldBytes(keyId, nowSeconds) {
      return heldBytesNow(keyId, nowSeconds);
    },
    async existing(ids) {
      const found = new Set<string>();
      for (const id of ids) {
        if (select.get(id)) {
          found.add(id);
        }
      }
      return found;
    },
  };
  return { ...createBlobStoreOn(rows, storage), heldBytesNow };
}
