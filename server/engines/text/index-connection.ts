/**
 * A worker's own connection to the search index's SQLite database file, kept for the worker's life: opening one
 * costs more than a file's first writes. The extraction worker writes passages on it (index-passages.ts); the
 * background embedding worker reads them (engines/embed/embed-passages.ts).
 */
import Database from 'better-sqlite3';

/** As the main thread's connection (storage/database.ts): a lock held elsewhere is waited for, not an error. */
const BUSY_TIMEOUT_MS = 5000;

const connections = new Map<string, Database.Database>();

export function indexConnection(file: string): Database.Database {
  let db = connections.get(file);
  if (!db) {
    db = new Database(file, { fileMustExist: true });
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // The main connection made the file WAL (a persistent mode); these two are per connection.
    db.pragma('synchronous = NORMAL');
    db.pragma('secure_delete = ON');
    connections.set(file, db);
  }
  return db;
}
