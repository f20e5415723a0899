/**
 * Opens the embedded SQLite database (better-sqlite3) and applies the schema of the stores that live in it.
 * Each store owns its tables and creates them idempotently; this module only opens, tunes and closes.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';

export type SqliteDatabase = Database.Database;

/** `:memory:` gives a private in-memory database (tests). */
export function openDatabase(file: string): SqliteDatabase {
  if (file !== ':memory:') {
    mkdirSync(path.dirname(file), { recursive: true });
  }
  const db = new Database(file);
  // WAL lets readers (GET /v1/usage) run while the usage writer commits; NORMAL sync is durable across
  // process crashes in WAL mode, which is what a self-hosted gateway needs.
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  return db;
}
