/**
 * How every instance learns that an API key was created, revoked or changed, by this process or any other on
 * the same database, so that its key cache (key-cache.ts) can answer from memory without going stale.
 *
 * One implementation per backend: SQLite polls a change counter kept by triggers (sqlite-key-change-feed.ts);
 * PostgreSQL uses LISTEN/NOTIFY; Redis pub/sub may be another. What every implementation promises:
 *
 * - `publish` is called by the key store after a change was committed. The listeners of this process hear it
 *   synchronously, before `publish` returns its promise, so a change made here is seen here at once (a test
 *   revokes a key and the next request is refused). The promise resolves once the other instances were told
 *   (e.g. the NOTIFY was sent); it rejects only if that failed, the local listeners having heard it anyway.
 * - A change made by another process (another instance, the keys CLI) reaches the listeners within 1 s.
 * - When the feed may have missed changes (a lost connection, reconnected; a counter that moved without saying
 *   which key), it delivers `{ kind: 'unknown' }`: the cache then re-reads everything. Delivering too many
 *   notices is always safe; delivering too few is not (the cache also reconciles every 30 s, the last resort).
 * - Listeners never throw (the cache's do not), are called in subscription order, and may be called more than
 *   once for one change (e.g. a NOTIFY echoed back to the instance that sent it).
 * - `close` stops timers and connections; after it, `publish` only tells local listeners and `subscribe`'s
 *   listeners hear nothing more from elsewhere.
 */

/** A key's id is enough: the cache drops what it holds for that key and reads it again when presented. */
export type KeyChange = { kind: 'created' | 'revoked' | 'updated'; keyId: string } | { kind: 'unknown' };

export type KeyChangeListener = (change: KeyChange) => void;

export interface KeyChangeFeed {
  /** Calls `listener` for every change from now on, this process's own included; returns the unsubscribe. */
  subscribe(listener: KeyChangeListener): () => void;
  /** Announces a committed change: local listeners at once, other instances within 1 s. */
  publish(change: KeyChange): Promise<void>;
  close(): Promise<void>;
}

/** The listeners of one process: what every feed implementation keeps and calls. */
export function localListeners(): {
  subscribe(listener: KeyChangeListener): () => void;
  emit(change: KeyChange): void;
} {
  const listeners = new Set<KeyChangeListener>();
  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    emit(change) {
      for (const listener of listeners) {
        listener(change);
      }
    },
  };
}

/** A feed for one process and nothing else (an in-memory database, tests): local listeners only. */
export function createLocalKeyChangeFeed(): KeyChangeFeed {
  const local = localListeners();
  return {
    subscribe: local.subscribe,
    async publish(change) {
      local.emit(change);
    },
    async close() {},
  };
}
