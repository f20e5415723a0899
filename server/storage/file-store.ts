/**
 * Uploaded files as rows (`POST /v1/files`): who owns each, what it was called and for, and which blob holds
 * its bytes (the blob store keeps the bytes; this store never touches the disk). Every read names the owning
 * key, so another key's id reads as unknown. Quotas are checked in the same transaction as the insert, so two
 * uploads finishing together cannot both slip under the limit, in one process or in several sharing the database. The byte quota is the key's whole storage:
 * `otherHeldBytes` adds what it holds besides files (its generated media in the blob store), so an upload
 * and a generation draw on one budget. Times are unix seconds, as the contract shows.
 */
import { randomId } from '../core/random-id.js';
import type { FileIndexState } from '../core/file-index.js';
import type { SqliteDatabase } from './database.js';

export interface StoredFile {
  id: string;
  keyId: string;
  blobId: string;
  filename: string;
  purpose: string;
  bytes: number;
  sha256: string;
  /** Sniffed from the bytes. */
  mediaType: string;
  createdAt: number;
  expiresAt: number | null;
  /** Undefined for rows written before indexing was recorded. */
  indexing?: FileIndexState;
}

export type NewStoredFile = Omit<StoredFile, 'id'>;

export interface FileQuota {
  maxBytes: number;
  maxCount: number;
}

/** What the key holds now (expired files not counted). */
export interface FileHoldings {
  /** Its files' bytes plus `otherHeldBytes`. */
  bytes: number;
  count: number;
}

export type CreateFileOutcome = { file: StoredFile } | { refused: 'bytes' | 'count'; holdings: FileHoldings };

export interface FileStore {
  /** Inserts the row unless the key's quota would be exceeded (checked atomically with the insert). */
  create(file: NewStoredFile, quota: FileQuota, now: number): Promise<CreateFileOutcome>;
  /** The key's own unexpired file. */
  get(id: string, keyId: string, now: number): Promise<StoredFile | undefined>;
  list(query: {
    keyId: string;
    purpose?: string;
    after?: string;
    limit: number;
    order: 'asc' | 'desc';
    now: number;
  }): Promise<{
    files: StoredFile[];
    hasMore: boolean;
  }>;
  /** Removes the key's file row and returns it (its blob is the caller's to delete). */
  delete(id: string, keyId: string): Promise<StoredFile | undefined>;
  holdings(keyId: string, now: number): Promise<FileHoldings>;
  /** Removes and returns up to `limit` files expired at `now`. */
  takeExpired(now: number, limit: number): Promise<StoredFile[]>;
  /** Records how indexing the file went (and ends its lease); false when the row is gone (deleted meanwhile). */
  setIndexing(id: string, state: FileIndexState): Promise<boolean>;
  /** Extends to `until` the indexing lease of those of these files still `indexing` (this process indexes them). */
  renewIndexing(ids: string[], until: number): Promise<void>;
  /**
   * Gives this state to every row still `indexing` whose lease ended before `now` (or that has none): the
   * process indexing it stopped without saying how it went. A row whose indexer lives, in this process or
   * another instance, keeps a renewed lease and is left alone. How many.
   */
  abandonIndexing(state: FileIndexState, now: number): Promise<number>;
}

/**
 * How long a row created `indexing` is held for its indexer without a renewal (seconds). The indexer's process
 * renews it while the extraction is queued or running (calls/files/indexing-leases.ts, every third of this).
 */
export const INDEXING_LEASE_SECONDS = 60;

/** The lease a new row starts with: only a row created `indexing` has one. */
export function initialIndexingLease(file: Pick<NewStoredFile, 'indexing'>, now: number): number | null {
  return file.indexing?.status === 'indexing' ? now + INDEXING_LEASE_SECONDS : null;
}

/** A `files` row as both backends read it. */
export interface FileRow {
  seq: number;
  id: string;
  key_id: string;
  blob_id: string;
  filename: string;
  purpose: string;
  bytes: number;
  sha256: string;
  media_type: string;
  created_at: number;
  expires_at: number | null;
  index_status: FileIndexState['status'] | null;
  index_reason: string | null;
  index_code: string | null;
}

export function toFile(row: FileRow): StoredFile {
  return {
    id: row.id,
    keyId: row.key_id,
    blobId: row.blob_id,
    filename: row.filename,
    purpose: row.purpose,
    bytes: row.bytes,
    sha256: row.sha256,
    mediaType: row.media_type,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    indexing:
      row.index_status === null
        ? undefined
        : { status: row.index_status, reason: row.index_reason ?? undefined, code: row.index_code ?? undefined },
  };
}

const LIVE = '(expires_at IS NULL OR expires_at > @now)';

export interface FileStoreOptions {
  /** Bytes the key holds outside this store that count against the same byte quota (its generated media). */
  otherHeldBytes?(keyId: string, nowSeconds: number): number;
}

/** The SQLite file store, which also answers a key's file bytes synchronously (for the blob store's quota transaction). */
export interface SqliteFileStore extends FileStore {
  /** The bytes of the key's files live at `now`, without `otherHeldBytes`. */
  fileBytesNow(keyId: string, now: number): number;
}

export function createFileStore(db: SqliteDatabase, options: FileStoreOptions = {}): SqliteFileStore {
  db.exec(`CREATE TABLE IF NOT EXISTS files (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    key_id TEXT NOT NULL,
    blob_id TEXT NOT NULL,
    filename TEXT NOT NULL,
    purpose TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    media_type TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER
  );
  CREATE INDEX IF NOT EXISTS files_by_key ON files (key_id, seq);
  CREATE INDEX IF NOT EXISTS files_by_expiry ON files (expires_at) WHERE expires_at IS NOT NULL`);
  const columns = db.prepare<[], { name: string }>('PRAGMA table_info(files)').all();
  if (!columns.some((column) => column.name === 'index_status')) {
    // Rows from before these columns were indexed (or skipped) before their upload answered: their state is unknown, so null.
    db.exec(
      'ALTER TABLE files ADD COLUMN index_status TEXT; ALTER TABLE files ADD COLUMN index_reason TEXT; ALTER TABLE files ADD COLUMN index_code TEXT',
    );
  }
  if (!columns.some((column) => column.name === 'index_lease_until')) {
    // Rows left `indexing` before leases existed have none: the next abandonment takes them, as a restart did.
    db.exec('ALTER TABLE files ADD COLUMN index_lease_until INTEGER');
  }

  const insert =
    db.prepare(`INSERT INTO files (id, key_id, blob_id, filename, purpose, bytes, sha256, media_type, created_at, expires_at, index_status, index_reason, index_code, index_lease_until)
    VALUES (@id, @keyId, @blobId, @filename, @purpose, @bytes, @sha256, @mediaType, @createdAt, @expiresAt, @indexStatus, @indexReason, @indexCode, @leaseUntil) RETURNING *`);
  const indexed = db.prepare<{ id: string; status: string; reason: string | null; code: string | null }>(
    'UPDATE files SET index_status = @status, index_reason = @reason, index_code = @code, index_lease_until = NULL WHERE id = @id',
  );
  const renew = db.prepare<{ id: string; until: number }>(
    "UPDATE files SET index_lease_until = @until WHERE id = @id AND index_status = 'indexing'",
  );
  const renewAll = db.transaction((ids: string[], until: number) => {
    for (const id of ids) {
      renew.run({ id, until });
    }
  });
  const byId = db.prepare<{ id: string; keyId: string; now: number }, FileRow>(
    `SELECT * FROM files WHERE id = @id AND key_id = @keyId AND ${LIVE}`,
  );
  const holdings = db.prepare<{ keyId: string; now: number }, { bytes: number | null; count: number }>(
    `SELECT SUM(bytes) AS bytes, COUNT(*) AS count FROM files WHERE key_id = @keyId AND ${LIVE}`,
  );
  const remove = db.prepare<{ id: string; keyId: string }, FileRow>(
    'DELETE FROM files WHERE id = @id AND key_id = @keyId RETURNING *',
  );
  const expired = db.prepare<{ now: number; limit: number }, FileRow>(
    'DELETE FROM files WHERE id IN (SELECT id FROM files WHERE expires_at IS NOT NULL AND expires_at <= @now LIMIT @limit) RETURNING *',
  );
  const held = (keyId: string, now: number): FileHoldings => {
    const row = holdings.get({ keyId, now });
    return { bytes: (row?.bytes ?? 0) + (options.otherHeldBytes?.(keyId, now) ?? 0), count: row?.count ?? 0 };
  };
  const create = db.transaction((file: NewStoredFile, quota: FileQuota, now: number): CreateFileOutcome => {
    const current = held(file.keyId, now);
    if (current.count + 1 > quota.maxCount) {
      return { refused: 'count', holdings: current };
    }
    if (current.bytes + file.bytes > quota.maxBytes) {
      return { refused: 'bytes', holdings: current };
    }
    const { indexing, ...fields } = file;
    const row = insert.get({
      ...fields,
      id: randomId('file', '-'),
      indexStatus: indexing?.status ?? null,
      indexReason: indexing?.reason ?? null,
      indexCode: indexing?.code ?? null,
      leaseUntil: initialIndexingLease(file, now),
    });
    return { file: toFile(row as FileRow) };
  });

  return {
    fileBytesNow: (keyId, now) => holdings.get({ keyId, now })?.bytes ?? 0,
    async create(file, quota, now) {
      // Immediate: the write lock is held from the quota's read to the insert, so a process sharing the file
      // cannot slip a row in between (a deferred transaction would fail with SQLITE_BUSY there instead).
      return create.immediate(file, quota, now);
    },
    async get(id, keyId, now) {
      const row = byId.get({ id, keyId, now });
      return row ? toFile(row) : undefined;
    },
    async list({ keyId, purpose, after, limit, order, now }) {
      const cursor =
        after === undefined
          ? undefined
          : (db
              .prepare<[string, string], { seq: number }>('SELECT seq FROM files WHERE id = ? AND key_id = ?')
              .get(after, keyId)?.seq ?? null);
      if (cursor === null) {
        return { files: [], hasMore: false }; // an unknown cursor continues nothing
      }
      const conditions = ['key_id = @keyId', LIVE];
      const parameters: Record<string, unknown> = { keyId, now, limit: limit + 1 };
      if (purpose !== undefined) {
        conditions.push('purpose = @purpose');
        parameters.purpose = purpose;
      }
      if (cursor !== undefined) {
        conditions.push(`seq ${order === 'asc' ? '>' : '<'} @cursor`);
        parameters.cursor = cursor;
      }
      const rows = db
        .prepare<Record<string, unknown>, FileRow>(
          `SELECT * FROM files WHERE ${conditions.join(' AND ')} ORDER BY seq ${order === 'asc' ? 'ASC' : 'DESC'} LIMIT @limit`,
        )
        .all(parameters);
      return { files: rows.slice(0, limit).map(toFile), hasMore: rows.length > limit };
    },
    async delete(id, keyId) {
      const row = remove.get({ id, keyId });
      return row ? toFile(row) : undefined;
    },
    async holdings(keyId, now) {
      return held(keyId, now);
    },
    async takeExpired(now, limit) {
      return expired.all({ now, limit }).map(toFile);
    },
    async setIndexing(id, { status, reason, code }) {
      return indexed.run({ id, status, reason: reason ?? null, code: code ?? null }).changes > 0;
    },
    async renewIndexing(ids, until) {
      if (ids.length > 0) {
        renewAll(ids, until);
      }
    },
    async abandonIndexing({ status, reason, code }, now) {
      return db
        .prepare(
          `UPDATE files SET index_status = @status, index_reason = @reason, index_code = @code, index_lease_until = NULL
           WHERE index_status = 'indexing' AND (index_lease_until IS NULL OR index_lease_until < @now)`,
        )
        .run({ status, reason: reason ?? null, code: code ?? null, now }).changes;
    },
  };
}
