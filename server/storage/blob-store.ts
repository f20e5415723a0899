/**
 * Stored bytes that outlive one answer (generated images and music behind signed links, uploaded files):
 * each blob's bytes are kept by a byte store (bytes/byte-store.ts: a directory under the data directory by
 * default, a shared directory or S3-compatible object storage), its metadata one SQLite row. The bytes are
 * complete under their key before the row is inserted, so a reader never sees a half-written blob. In the
 * default directory, private to this instance, files left without a row by a crash are swept at start; a
 * shared store is never swept (another instance's blob may be between its bytes and its row), and a crash
 * there can leave an orphan object, which costs space but is never served. Blobs with an expiry are deleted
 * by `purge()`.
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
 * the key, `heldBytes` sums the key's live ones for its storage quota, and `admit` is asked right before the
 * row is inserted. The owner's admission reads the database (asynchronously), so puts for one key are queued
 * behind each other in this process from the admission to the insert: two puts finishing together cannot both
 * pass the quota. (Across processes the quota may be passed by one result at most; see ARCHITECTURE.md.)
 * Uploads carry no owner here: their file row (storage/file-store.ts) counts them.
 *
 * The row methods are asynchronous, as every store's are (a PostgreSQL implementation sits beside this one);
 * the bytes stay on disk here either way.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, readdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ByteStore } from './bytes/byte-store.js';
import { createDirectoryByteStore } from './bytes/directory-byte-store.js';
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

/** Whose quota a put blob counts against, and the check that may refuse it (by throwing) before it is kept. */
export interface BlobOwner {
  keyId: string;
  admit?(size: number): Promise<void>;
}

export interface BlobStore {
  /** Streams `source` to a temporary file; rejects (with nothing left on disk) when the source fails or `check` throws. */
  stage(source: Readable, options: StageOptions): Promise<StagedBlob>;
  /** Rejects, with nothing left on disk, when `owner.admit` throws. */
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
}

interface BlobRow {
  id: string;
  media_type: string;
  size: number;
  created_at: number;
  expires_at: number | null;
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

const ID_PATTERN = /^[a-z]+_[0-9A-Za-z]{8,64}$/;

function toMeta(row: BlobRow): BlobMeta {
  return {
    id: row.id,
    mediaType: row.media_type,
    size: row.size,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}

/** Bytes kept by a store other instances may share, with uploads staged in a local directory of this instance's. */
export interface SharedBlobBytes {
  bytes: ByteStore;
  stagingDirectory: string;
}

/** The SQLite blob store, which also answers `heldBytes` synchronously (for the file store's quota transaction). */
export interface SqliteBlobStore extends BlobStore {
  heldBytesNow(keyId: string, nowSeconds: number): number;
}

/**
 * A string is this instance's own directory (the default): the bytes are files in it, uploads are staged in it,
 * and it is swept of files without a row at start.
 */
export function createBlobStore(db: SqliteDatabase, storage: string | SharedBlobBytes): SqliteBlobStore {
  const shared = typeof storage !== 'string';
  const bytes = shared ? storage.bytes : createDirectoryByteStore(storage);
  const directory = shared ? storage.stagingDirectory : storage;
  mkdirSync(directory, { recursive: true, mode: 0o700 });
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
  const insert = db.prepare(
    'INSERT INTO blobs (id, media_type, size, created_at, expires_at, key_id) VALUES (@id, @mediaType, @size, @createdAt, @expiresAt, @keyId)',
  );
  const held = db.prepare<{ keyId: string; now: number }, { bytes: number | null }>(
    'SELECT SUM(size) AS bytes FROM blobs WHERE key_id = @keyId AND (expires_at IS NULL OR expires_at > @now)',
  );
  const select = db.prepare<[string], BlobRow>('SELECT * FROM blobs WHERE id = ?');
  const remove = db.prepare('DELETE FROM blobs WHERE id = ?');
  const expired = db.prepare<[number], { id: string }>(
    'SELECT id FROM blobs WHERE expires_at IS NOT NULL AND expires_at <= ? LIMIT 1000',
  );
  const heldBytesNow = (keyId: string, nowSeconds: number) => held.get({ keyId, now: nowSeconds })?.bytes ?? 0;
  const metaOf = (id: string): BlobMeta | undefined => {
    if (!ID_PATTERN.test(id)) {
      return undefined;
    }
    const row = select.get(id);
    return row ? toMeta(row) : undefined;
  };
  // The tail of each key's queue of owned puts between admission and insert (see the header).
  const admissions = new Map<string, Promise<unknown>>();
  async function admitAndInsert(meta: BlobMeta, owner: BlobOwner | undefined): Promise<void> {
    if (!owner?.admit) {
      insert.run({ ...meta, keyId: owner?.keyId ?? null });
      return;
    }
    const admit = owner.admit;
    const previous = admissions.get(owner.keyId) ?? Promise.resolve();
    const turn = previous.then(async () => {
      await admit(meta.size);
      insert.run({ ...meta, keyId: owner.keyId });
    });
    const tail = turn.catch(() => {});
    admissions.set(owner.keyId, tail);
    try {
      await turn;
    } finally {
      if (admissions.get(owner.keyId) === tail) {
        admissions.delete(owner.keyId);
      }
    }
  }

  // Files without a row: a crash between the rename and the insert, or rows removed by hand. The staging
  // directory of a shared store holds only this instance's unfinished uploads: all of it goes.
  const known = shared
    ? new Set<string>()
    : new Set((db.prepare('SELECT id FROM blobs').all() as Array<{ id: string }>).map((row) => row.id));
  for (const name of readdirSync(directory)) {
    if (!known.has(name)) {
      void rm(path.join(directory, name), { force: true });
    }
  }

  async function deleteIds(ids: string[]): Promise<void> {
    for (const id of ids) {
      remove.run(id); // the row first: once it is gone nobody is handed the bytes
      await bytes.delete(id);
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
          await bytes.putFile(id, temporary);
          state = 'committed';
          insert.run({ ...meta, keyId: null });
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
      const meta: BlobMeta = {
        id: newId(options.prefix),
        mediaType: options.mediaType,
        size: data.byteLength,
        createdAt: Math.floor((options.now ?? Date.now()) / 1000),
        expiresAt: options.expiresAt,
      };
      await bytes.put(meta.id, data);
      try {
        await admitAndInsert(meta, options.owner);
      } catch (error) {
        await bytes.delete(meta.id);
        throw error;
      }
      return meta;
    },
    heldBytesNow,
    async heldBytes(keyId, nowSeconds) {
      return heldBytesNow(keyId, nowSeconds);
    },
    async get(id) {
      return metaOf(id);
    },
    async open(id, range) {
      return metaOf(id) ? bytes.open(id, range) : undefined;
    },
    async delete(id) {
      if (!metaOf(id)) {
        return false;
      }
      await deleteIds([id]);
      return true;
    },
    async purge(now) {
      let total = 0;
      for (;;) {
        const ids = expired.all(now).map((row) => row.id);
        if (ids.length === 0) {
          return total;
        }
        await deleteIds(ids);
        total += ids.length;
      }
    },
  };
}
