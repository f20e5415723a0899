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
import type { SqliteDatabase } from './database.js';

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
  /** Replaces whatever was indexed for the file with these passages, in one transaction. */
  replace(file: IndexedFile, passages: string[], now: number): Promise<void>;
  remove(fileId: string): Promise<void>;
  search(query: { keyId: string; match: string; limit: number }): Promise<PassageHit[]>;
  /** Passages indexed for a key (tests, bench). */
  count(keyId: string): Promise<number>;
}

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
  `);
  const removeFile = db.prepare('DELETE FROM search_passages WHERE file_id = ?');
  const insert = db.prepare(
    'INSERT INTO search_passages (file_id, key_id, seq, title, body, indexed_at) VALUES (@fileId, @keyId, @seq, @title, @body, @indexedAt)',
  );
  const search = db.prepare(`
    SELECT p.file_id AS fileId, p.title AS title, p.body AS passage, p.indexed_at AS indexedAt,
           snippet(search_passages_fts, 1, '', '', '…', ${SNIPPET_TOKENS}) AS snippet,
           -bm25(search_passages_fts, ${TITLE_WEIGHT}, ${BODY_WEIGHT}) AS score
    FROM search_passages_fts JOIN search_passages p ON p.id = search_passages_fts.rowid
    WHERE search_passages_fts MATCH @match AND p.key_id = @keyId
    ORDER BY bm25(search_passages_fts, ${TITLE_WEIGHT}, ${BODY_WEIGHT})
    LIMIT @limit`);
  const count = db.prepare('SELECT count(*) AS n FROM search_passages WHERE key_id = ?').pluck();
  const replace = db.transaction((file: IndexedFile, passages: string[], now: number) => {
    removeFile.run(file.fileId);
    passages.forEach((body, seq) =>
      insert.run({ fileId: file.fileId, keyId: file.keyId, seq, title: file.title, body, indexedAt: now }),
    );
  });
  return {
    async replace(file, passages, now) {
      replace(file, passages, now);
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
  };
}
