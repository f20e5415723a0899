/**
 * The local search index: passages of the caller's stored files in SQLite FTS5, in the main database. Passages
 * are rows of `search_passages` (file, key, order, title, text); `search_passages_fts` is an external-content
 * FTS5 index over their title and text (porter stemming over unicode61, diacritics folded), kept in step by
 * triggers, so a file's passages are dropped by one indexed DELETE. Ranking is bm25 with the title weighted
 * above the body; snippets come from FTS5's `snippet()`.
 *
 * Every search names a key, and only that key's passages can match: the key filter is in the statement, not
 * left to callers. `match` must be a MATCH expression built by `safe-match.ts`; this store does not build
 * queries from user text.
 */
import { endianness } from 'node:os';
import path from 'node:path';
import { DELETE_FILE_PASSAGES_SQL, INSERT_PASSAGE_SQL } from '../engines/text/passage-sql.js';
import type { SqliteDatabase } from './database.js';
import { writeWhenFree } from './write-when-free.js';

export interface IndexedFile {
  fileId: string;
  keyId: string;
  title: string;
}

export interface PassageHit {
  fileId: string;
  title: string;
  passage: string;
  snippet: string;
  /** bm25 with the sign flipped: higher is better. */
  score: number;
  /** When the file was indexed (ms since the epoch). */
  indexedAt: number;
}

export interface PassageStore {
  /**
   * The SQLite database file the passages are in, when another thread may open it and write them itself (the
   * extraction worker, engines/text/index-passages.ts); absent for an in-memory database and for PostgreSQL.
   */
  databaseFile?: string;
  /**
   * With `databaseFile`: claims as `claimUnembedded` does, but answers only the ids and keys, for a worker that
   * reads the texts itself (engines/embed/embed-passages.ts): the event loop builds no string of them.
   */
  claimUnembeddedIds?(
    model: string,
    limit: number,
    now: number,
    until: number,
    afterId?: number,
  ): Promise<Array<{ id: number; keyId: string }>>;
  /** Replaces whatever was indexed for the file with these passages, in one transaction. */
  replace(file: IndexedFile, passages: string[], now: number): Promise<void>;
  /**
   * Adds passages to the file's, numbered from `firstSeq`: the search index writes a long file this way, a few
   * at a time after `remove`, so no one transaction holds the event loop (SQLite) or a connection for long.
   */
  append(file: IndexedFile, passages: string[], firstSeq: number, now: number): Promise<void>;
  remove(fileId: string): Promise<void>;
  search(query: { keyId: string; match: string; limit: number }): Promise<PassageHit[]>;
  /** Passages indexed for a key (tests, bench). */
  count(keyId: string): Promise<number>;
  /** Passages without a vector of `model` (none yet, or another model's: a change of model re-embeds), oldest first. */
  unembedded(model: string, limit: number): Promise<Array<{ id: number; title: string; text: string }>>;
  /**
   * Takes up to `limit` passages lacking a vector of `model` that nobody holds a live claim on (its `until`,
   * ms since the epoch, past `now`), oldest first, and claims them until `until` in the same statement: two
   * processes (the workers of `--workers N`, instances on one PostgreSQL) never take the same passage while
   * a claim lives, so each passage is embedded once. A claim is dropped when its vectors are stored or it is
   * released; one whose process died expires at `until`.
   * `afterId` is a cursor: only passages with a greater id are looked at (the caller passes the last id it
   * claimed), so claiming a long file's passages batch by batch does not scan the embedded ones again each time.
   */
  claimUnembedded(
    model: string,
    limit: number,
    now: number,
    until: number,
    afterId?: number,
  ): Promise<Array<{ id: number; keyId: string; title: string; text: string }>>;
  /** Drops claims taken by `claimUnembedded` (the embedding failed): another round may take them at once. */
  releaseClaims(ids: number[]): Promise<void>;
  /** Keeps each passage's vector of `model` (and drops its claim); a passage removed meanwhile gets none. */
  storeVectors(model: string, rows: Array<{ id: number; vector: ArrayLike<number> }>): Promise<void>;
  /** The key's passages with a vector of `model`, by cosine similarity to `vector` (the score), best first. */
  nearest(query: { keyId: string; model: string; vector: number[]; limit: number }): Promise<PassageHit[]>;
}

const LITTLE_ENDIAN = endianness() === 'LE';

/** A vector as stored: little-endian float32 bytes (a Float32Array on a little-endian machine is that already). */
export function vectorBytes(vector: ArrayLike<number>): Buffer {
  if (vector instanceof Float32Array && LITTLE_ENDIAN) {
    return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
  }
  const bytes = Buffer.alloc(vector.length * 4);
  for (let index = 0; index < vector.length; index++) {
    bytes.writeFloatLE(vector[index]!, index * 4);
  }
  return bytes;
}

/** Cosine similarity of a query vector and a stored one (0 when their lengths differ or either is zero). */
export function storedSimilarity(vector: readonly number[], bytes: Uint8Array): number {
  if (bytes.length !== vector.length * 4) {
    return 0;
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let dot = 0;
  let a = 0;
  let b = 0;
  for (let index = 0; index < vector.length; index++) {
    const x = vector[index] ?? 0;
    const y = view.getFloat32(index * 4, true);
    dot += x * y;
    a += x * x;
    b += y * y;
  }
  return a === 0 || b === 0 ? 0 : dot / Math.sqrt(a * b);
}

/** Rows with their stored vectors, ranked by similarity to `vector`: the nearest `limit` as hits. */
export function rankByVector(
  rows: Array<{ fileId: string; title: string; passage: string; indexedAt: number; vector: Uint8Array }>,
  vector: readonly number[],
  limit: number,
): PassageHit[] {
  return rows
    .map((row) => ({ row, score: storedSimilarity(vector, row.vector) }))
    .sort((x, y) => y.score - x.score)
    .slice(0, limit)
    .map(({ row, score }) => ({
      fileId: row.fileId,
      title: row.title,
      passage: row.passage,
      snippet:
        row.passage.length > SEMANTIC_SNIPPET_CHARS ? `${row.passage.slice(0, SEMANTIC_SNIPPET_CHARS)}…` : row.passage,
      score,
      indexedAt: Number(row.indexedAt),
    }));
}

/** A vector hit has no matched words to centre a snippet on: the passage's start. */
const SEMANTIC_SNIPPET_CHARS = 200;

/** Title matches count four times a body match: a file named for the query is the likeliest answer. */
const TITLE_WEIGHT = 4;
const BODY_WEIGHT = 1;
/** Tokens a snippet holds (FTS5's upper limit is 64). */
const SNIPPET_TOKENS = 32;

export function createPassageStore(db: SqliteDatabase): PassageStore {
  db.exec(`
    CREATE TABLE IF NOT EXISTS search_passages (
      id INTEGER PRIMARY KEY,
      file_id TEXT NOT NULL,
      key_id TEXT NOT NULL,
      seq INTEGER NOT NULL,
      title TEXT NOT NULL,
      body TEXT NOT NULL,
      indexed_at INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS search_passages_file ON search_passages (file_id);
    CREATE VIRTUAL TABLE IF NOT EXISTS search_passages_fts USING fts5(
      title, body, content='search_passages', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2'
    );
    CREATE TRIGGER IF NOT EXISTS search_passages_ai AFTER INSERT ON search_passages BEGIN
      INSERT INTO search_passages_fts (rowid, title, body) VALUES (new.id, new.title, new.body);
    END;
    CREATE TRIGGER IF NOT EXISTS search_passages_ad AFTER DELETE ON search_passages BEGIN
      INSERT INTO search_passages_fts (search_passages_fts, rowid, title, body) VALUES ('delete', old.id, old.title, old.body);
    END;
    CREATE TABLE IF NOT EXISTS search_passage_vectors (
      passage_id INTEGER PRIMARY KEY,
      model TEXT NOT NULL,
      vector BLOB NOT NULL
    );
    CREATE TRIGGER IF NOT EXISTS search_passages_vectors_ad AFTER DELETE ON search_passages BEGIN
      DELETE FROM search_passage_vectors WHERE passage_id = old.id;
    END;
    CREATE TABLE IF NOT EXISTS search_passage_embed_claims (
      passage_id INTEGER PRIMARY KEY,
      model TEXT NOT NULL,
      until_ms INTEGER NOT NULL
    );
    CREATE TRIGGER IF NOT EXISTS search_passages_claims_ad AFTER DELETE ON search_passages BEGIN
      DELETE FROM search_passage_embed_claims WHERE passage_id = old.id;
    END;
  `);
  const unembedded = db.prepare(`
    SELECT p.id AS id, p.title AS title, p.body AS text FROM search_passages p
    LEFT JOIN search_passage_vectors v ON v.passage_id = p.id
    WHERE v.passage_id IS NULL OR v.model <> ?
    ORDER BY p.id LIMIT ?`);
  const claimableSql = (columns: string) => `
    SELECT ${columns} FROM search_passages p
    LEFT JOIN search_passage_vectors v ON v.passage_id = p.id
    LEFT JOIN search_passage_embed_claims c ON c.passage_id = p.id
    WHERE p.id > @afterId AND (v.passage_id IS NULL OR v.model <> @model)
      AND (c.passage_id IS NULL OR c.until_ms <= @now OR c.model <> @model)
    ORDER BY p.id LIMIT @limit`;
  const claimable = db.prepare(claimableSql('p.id AS id, p.key_id AS keyId, p.title AS title, p.body AS text'));
  const claimableIds = db.prepare(claimableSql('p.id AS id, p.key_id AS keyId'));
  const claim = db.prepare(
    'INSERT OR REPLACE INTO search_passage_embed_claims (passage_id, model, until_ms) VALUES (?, ?, ?)',
  );
  const release = db.prepare('DELETE FROM search_passage_embed_claims WHERE passage_id = ?');
  // IMMEDIATE: the write lock is taken before the read, so another process's claim cannot slip in between.
  const claimUnembedded = db.transaction(
    (select: typeof claimable, model: string, limit: number, now: number, until: number, afterId: number) => {
      const rows = select.all({ model, limit, now, afterId }) as Array<{ id: number }>;
      for (const row of rows) {
        claim.run(row.id, model, until);
      }
      return rows;
    },
  );
  const releaseClaims = db.transaction((ids: number[]) => {
    for (const id of ids) {
      release.run(id);
    }
  });
  const storeVector = db.prepare(`
    INSERT OR REPLACE INTO search_passage_vectors (passage_id, model, vector)
    SELECT @id, @model, @vector WHERE EXISTS (SELECT 1 FROM search_passages WHERE id = @id)`);
  const storeVectors = db.transaction((model: string, rows: Array<{ id: number; vector: ArrayLike<number> }>) => {
    for (const row of rows) {
      storeVector.run({ id: row.id, model, vector: vectorBytes(row.vector) });
      release.run(row.id);
    }
  });
  const withVectors = db.prepare(`
    SELECT p.file_id AS fileId, p.title AS title, p.body AS passage, p.indexed_at AS indexedAt, v.vector AS vector
    FROM search_passage_vectors v JOIN search_passages p ON p.id = v.passage_id
    WHERE p.key_id = ? AND v.model = ?`);
  const removeFile = db.prepare(DELETE_FILE_PASSAGES_SQL);
  const insert = db.prepare(INSERT_PASSAGE_SQL);
  const search = db.prepare(`
    SELECT p.file_id AS fileId, p.title AS title, p.body AS passage, p.indexed_at AS indexedAt,
           snippet(search_passages_fts, 1, '', '', '…', ${SNIPPET_TOKENS}) AS snippet,
           -bm25(search_passages_fts, ${TITLE_WEIGHT}, ${BODY_WEIGHT}) AS score
    FROM search_passages_fts JOIN search_passages p ON p.id = search_passages_fts.rowid
    WHERE search_passages_fts MATCH @match AND p.key_id = @keyId
    ORDER BY bm25(search_passages_fts, ${TITLE_WEIGHT}, ${BODY_WEIGHT})
    LIMIT @limit`);
  const count = db.prepare('SELECT count(*) AS n FROM search_passages WHERE key_id = ?').pluck();
  const append = db.transaction((file: IndexedFile, passages: string[], firstSeq: number, now: number) => {
    passages.forEach((body, offset) =>
      insert.run({
        fileId: file.fileId,
        keyId: file.keyId,
        seq: firstSeq + offset,
        title: file.title,
        body,
        indexedAt: now,
      }),
    );
  });
  const replace = db.transaction((file: IndexedFile, passages: string[], now: number) => {
    removeFile.run(file.fileId);
    append(file, passages, 0, now);
  });
  return {
    ...(db.memory ? {} : { databaseFile: path.resolve(db.name) }),
    async replace(file, passages, now) {
      replace(file, passages, now);
    },
    async append(file, passages, firstSeq, now) {
      append(file, passages, firstSeq, now);
    },
    async remove(fileId) {
      removeFile.run(fileId);
    },
    async search(query) {
      return search.all(query) as PassageHit[];
    },
    async count(keyId) {
      return count.get(keyId) as number;
    },
    async unembedded(model, limit) {
      return unembedded.all(model, limit) as Array<{ id: number; title: string; text: string }>;
    },
    async claimUnembedded(model, limit, now, until, afterId = 0) {
      const claimed = () => claimUnembedded.immediate(claimable, model, limit, now, until, afterId);
      return (await writeWhenFree(db, claimed)) as Array<{ id: number; keyId: string; title: string; text: string }>;
    },
    ...(db.memory
      ? {}
      : {
          async claimUnembeddedIds(model: string, limit: number, now: number, until: number, afterId = 0) {
            const claimed = () => claimUnembedded.immediate(claimableIds, model, limit, now, until, afterId);
            return (await writeWhenFree(db, claimed)) as Array<{ id: number; keyId: string }>;
          },
        }),
    async releaseClaims(ids) {
      releaseClaims(ids);
    },
    async storeVectors(model, rows) {
      await writeWhenFree(db, () => storeVectors(model, rows));
    },
    async nearest({ keyId, model, vector, limit }) {
      return rankByVector(withVectors.all(keyId, model) as Parameters<typeof rankByVector>[0], vector, limit);
    },
  };
}
