/**
 * The key change feed (key-change-feed.ts) of a SQLite database. Triggers on api_keys count every insert,
 * update and delete in `api_keys_meta` (key-store.ts), whichever connection made it: this feed reads that one
 * counter every `intervalMs` (one indexed read of one row, off the request path) and tells its listeners
 * `{ kind: 'unknown' }` when it moved, so a key changed by the keys CLI next to a running server is seen within
 * `intervalMs` plus the cache's re-read. Changes published by this process's own key store reach its listeners
 * at once; the counter then reports them a second time, which costs one re-read and is harmless.
 */
import type { SqliteDatabase } from './database.js';
import { type KeyChangeFeed, localListeners } from './key-change-feed.js';

/** Well under the 1 s within which a change must be seen everywhere; one cheap read per period. */
export const KEY_CHANGES_POLL_MS = 250;

export function createSqliteKeyChangeFeed(
  db: SqliteDatabase,
  options: { intervalMs?: number; onError?: (error: unknown) => void } = {},
): KeyChangeFeed {
  const local = localListeners();
  // The key store makes the table; it may be made after this feed (the store publishes on it), so the
  // statement is prepared at the first read, and the first value read is the baseline.
  let counter: { get(): number | undefined } | undefined;
  const read = () => {
    counter ??= db.prepare<[], number>("SELECT value FROM api_keys_meta WHERE name = 'changes'").pluck();
    return counter.get();
  };
  let seen: number | undefined;
  try {
    seen = read();
  } catch {
    // No table yet: the key store will make it with the counter at 0, which is then where this feed stands.
    seen = 0;
  }
  let failing = false;
  const timer = setInterval(() => {
    let current: number | undefined;
    try {
      current = read();
      failing = false;
      if (seen === undefined) {
        seen = current;
        return;
      }
    } catch (error) {
      // Said once per failing stretch, not every period; the cache keeps answering from what it holds.
      if (!failing) {
        failing = true;
        options.onError?.(error);
      }
      return;
    }
    if (current !== seen) {
      seen = current;
      local.emit({ kind: 'unknown' });
    }
  }, options.intervalMs ?? KEY_CHANGES_POLL_MS);
  timer.unref();
  return {
    subscribe: local.subscribe,
    async publish(change) {
      local.emit(change);
    },
    async close() {
      clearInterval(timer);
    },
  };
}
