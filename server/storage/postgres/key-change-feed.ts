/**
 * Key changes between instances over PostgreSQL `LISTEN/NOTIFY`: a trigger on `api_keys` notifies
 * `omnigate_api_keys` on every change (migrations.ts), and each instance keeps one dedicated connection
 * listening for it, outside the pool. A notice drops the instance's key cache, so a key revoked on one instance
 * is refused by the others as soon as the notice arrives (milliseconds on one network).
 *
 * Notices sent while the connection is down are lost, so the cache is also dropped whenever the connection is
 * (re)established, and at a slow periodic reconcile besides, for notices lost in ways the client cannot see.
 * A lost connection is retried with backoff for as long as the feed is open; it never throws at its caller.
 */
import pg from 'pg';

export const KEY_CHANGES_CHANNEL = 'omnigate_api_keys';

export interface PostgresKeyChangeFeedOptions {
  url: string;
  /** Called on each notice, on each (re)connection and at each reconcile: drop what was cached. */
  onChange(): void;
  onError?(error: Error): void;
  /** How often the cache is dropped even without a notice (ms); 0 turns it off. */
  reconcileMs?: number;
}

export interface PostgresKeyChangeFeed {
  /** Resolves once the first LISTEN is in place (or the first attempt failed; retries go on). */
  ready: Promise<void>;
  close(): Promise<void>;
}

const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5_000;

export function startPostgresKeyChangeFeed(options: PostgresKeyChangeFeedOptions): PostgresKeyChangeFeed {
  let closed = false;
  let client: pg.Client | undefined;
  let retryMs = RETRY_MIN_MS;
  let retryTimer: NodeJS.Timeout | undefined;
  const reconcile =
    (options.reconcileMs ?? 30_000) > 0
      ? setInterval(() => options.onChange(), options.reconcileMs ?? 30_000)
      : undefined;
  reconcile?.unref();

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
      if (failed) {
        return;
      }
      failed = true;
      options.onError?.(error);
      if (client === next) {
        client = undefined;
      }
      void next.end().catch(() => {});
      // Changes may be missed until the next LISTEN: nothing cached can be trusted from here.
      options.onChange();
      scheduleRetry();
    };
    next.on('error', onFailure);
    next.on('end', () => onFailure(new Error('key change feed: connection ended')));
    next.on('notification', (message) => {
      if (message.channel === KEY_CHANGES_CHANNEL) {
        options.onChange();
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
    options.onChange();
  }

  const ready = connect();
  return {
    ready,
    async close() {
      closed = true;
      clearTimeout(retryTimer);
      clearInterval(reconcile);
      const current = client;
      client = undefined;
      if (current) {
        current.removeAllListeners('end');
        current.removeAllListeners('error');
        current.on('error', () => {});
        await current.end().catch(() => {});
      }
    },
  };
}
