/**
 * The key change feed (../key-change-feed.ts) of a PostgreSQL database, over `LISTEN/NOTIFY`. The database
 * announces every change itself: a trigger on `api_keys` sends `NOTIFY omnigate_api_keys` with the change
 * (`{"kind":"revoked","keyId":"key_…"}`) when the transaction commits (migrations.ts), whoever made it. Each
 * instance listens on one dedicated connection outside the pool, so a key revoked through one instance reaches
 * every other instance's key cache in the time a notice takes (milliseconds on one network).
 *
 * Notices sent while the connection is down are lost, so each (re)connection delivers `{ kind: 'unknown' }`
 * (the cache re-reads every key); a lost connection is retried with backoff for as long as the feed is open,
 * and never throws at its caller. `publish` tells this process's listeners only: the trigger tells the others
 * (and this instance hears its own change once more, which is harmless).
 */
import pg from 'pg';
import { type KeyChange, type KeyChangeFeed, localListeners } from '../key-change-feed.js';

export const KEY_CHANGES_CHANNEL = 'omnigate_api_keys';

export interface PostgresKeyChangeFeedOptions {
  url: string;
  /** A lost connection (said once per loss); the feed reconnects by itself. */
  onError?(error: Error): void;
}

export interface PostgresKeyChangeFeed extends KeyChangeFeed {
  /** Resolves once the first LISTEN is in place, or the first attempt failed (retries go on). */
  ready: Promise<void>;
}

const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5_000;

function parseChange(payload: string | undefined): KeyChange {
  try {
    const change = JSON.parse(payload ?? '') as { kind?: unknown; keyId?: unknown };
    if (
      (change.kind === 'created' || change.kind === 'revoked' || change.kind === 'updated') &&
      typeof change.keyId === 'string'
    ) {
      return { kind: change.kind, keyId: change.keyId };
    }
  } catch {
    // A notice this release does not understand: re-read everything.
  }
  return { kind: 'unknown' };
}

export function startPostgresKeyChangeFeed(options: PostgresKeyChangeFeedOptions): PostgresKeyChangeFeed {
  const local = localListeners();
  let closed = false;
  let client: pg.Client | undefined;
  let retryMs = RETRY_MIN_MS;
  let retryTimer: NodeJS.Timeout | undefined;

  const scheduleRetry = () => {
    if (closed || retryTimer) {
      return;
    }
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      void connect();
    }, retryMs);
    retryTimer.unref();
    retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
  };

  async function connect(): Promise<void> {
    const next = new pg.Client({ connectionString: options.url, connectionTimeoutMillis: 5_000, keepAlive: true });
    let failed = false;
    const onFailure = (error: Error) => {
      if (failed || closed) {
        return;
      }
      failed = true;
      if (client === next) {
        client = undefined;
        // Heard until now; from here changes may be missed until the next LISTEN.
        options.onError?.(error);
      }
      void next.end().catch(() => {});
      scheduleRetry();
    };
    next.on('error', onFailure);
    next.on('end', () => onFailure(new Error('key change feed: the connection ended')));
    next.on('notification', (message) => {
      if (message.channel === KEY_CHANGES_CHANNEL) {
        local.emit(parseChange(message.payload));
      }
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${KEY_CHANGES_CHANNEL}`);
    } catch (error) {
      onFailure(error as Error);
      return;
    }
    if (closed) {
      failed = true;
      await next.end().catch(() => {});
      return;
    }
    client = next;
    retryMs = RETRY_MIN_MS;
    // Whatever changed before this LISTEN was not heard.
    local.emit({ kind: 'unknown' });
  }

  return {
    ready: connect(),
    subscribe: local.subscribe,
    async publish(change) {
      local.emit(change);
    },
    async close() {
      closed = true;
      clearTimeout(retryTimer);
      const current = client;
      client = undefined;
      if (current) {
        await current.end().catch(() => {});
      }
    },
  };
}
