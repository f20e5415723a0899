/**
 * Opens the embedded SQLite database (better-sqlite3) and applies the schema of the stores that live in it.
 * Each store owns its tables and creates them idempotently; this module only opens, tunes and closes.
 *
 * The database holds key hashes and whole conversations, so only its owner may read it: the directory is made
 * 0700 and the files 0600, also when they already existed with wider modes (SQLite gives a new -wal or -shm
 * file the mode of the database file, so tightening the database file covers the files created later).
 */
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';

export type SqliteDatabase = Database.Database;

/** How long a statement waits for a lock held by another connection before failing with SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 5000;

/** `:memory:` gives a private in-memory database (tests). */
export function openDatabase(file: string): SqliteDatabase {
  if (file !== ':memory:') {
    const dir = path.dirname(file);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
    if (existsSync(file)) {
      chmodSync(file, 0o600);
    }
  }
  const db = new Database(file);
  // First, so that every statement after it — the journal mode and the stores' schema included — waits for a
  // lock held by another process on the file (the keys CLI, a worker of `--workers N`) instead of failing.
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  // WAL lets readers (GET /v1/usage) run while the usage writer commits; NORMAL sync is durable across
  // process crashes in WAL mode, which is what a self-hosted gateway needs.
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  // Deleted and overwritten content (a purged conversation, a replaced key hash or prefix) is zeroed instead of
  // lingering in free pages of the file.
  db.pragma('secure_delete = ON');
  if (file !== ':memory:') {
    for (const name of [file, `${file}-wal`, `${file}-shm`]) {
      if (existsSync(name)) {
        chmodSync(name, 0o600);
      }
    }
  }
  return db;
}
