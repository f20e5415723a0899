/**
 * A background write on the main thread's SQLite connection that never sleeps the event loop. better-sqlite3 is
 * synchronous: a write that meets the write lock held by another connection (the extraction worker writing a
 * file's passages, another process of `--workers N`) waits in SQLite's busy handler, which sleeps the whole thread
 * (1, 2, 5, 10… ms at a time, up to `busy_timeout`), and every request waits with it. Here the write is tried with
 * no busy wait; when the lock is taken it is tried again after a timer, so requests run while it waits. Used for
 * the writes that are nobody's answer (usage batches, passage claims, vectors); an answer's own write keeps the
 * busy handler.
 */
import { BUSY_TIMEOUT_MS, type SqliteDatabase } from './database.js';

/** The longest pause between two tries: the lock is held for a transaction of about a millisecond at a time. */
const MAX_PAUSE_MS = 20;

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_BUSY_SNAPSHOT' || code === 'SQLITE_LOCKED';
}

/**
 * Runs `write` (one transaction: all of it or nothing) once the write lock is free, giving up with SQLite's own
 * SQLITE_BUSY error after `budgetMs`, as the busy handler would have.
 */
export async function writeWhenFree<T>(db: SqliteDatabase, write: () => T, budgetMs = BUSY_TIMEOUT_MS): Promise<T> {
  const deadline = Date.now() + budgetMs;
  for (let pauseMs = 1; ; pauseMs = Math.min(pauseMs * 2, MAX_PAUSE_MS)) {
    db.pragma('busy_timeout = 0');
    try {
      return write();
    } catch (error) {
      if (!isBusy(error) || Date.now() >= deadline) {
        throw error;
      }
    } finally {
      db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
}
