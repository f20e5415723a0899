/**
 * Whether Redis answers, for the readiness check (`OMNIGATE_REDIS_URL`: the limit counters and the circuits
 * live there). The probe keeps one connection of its own, reconnecting in the background, so a check is one
 * PING on an open connection, or the reason the connection is not open: it never waits for a reconnect.
 * Its detail names the host and port only, never the URL (which may hold a password).
 */
import { createRequire } from 'node:module';

export interface RedisProbe {
  /** null when Redis answers a PING within the timeout, else why not. */
  problem(): Promise<string | null>;
  close(): Promise<void>;
}

export function createRedisProbe(url: string, timeoutMs = 2_000): RedisProbe {
  // Loaded only when Redis is configured: a gateway without it never holds the client library.
  const { Redis } = createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
  const client = new Redis(url, {
    lazyConnect: false,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
  const where = `${client.options.host}:${client.options.port}`;
  let lastError: string | undefined;
  client.on('error', (error: NodeJS.ErrnoException) => {
    lastError = error.code ?? error.message;
  });
  client.on('ready', () => {
    lastError = undefined;
  });
  return {
    async problem() {
      if (client.status !== 'ready') {
        return `no connection to Redis at ${where} (${lastError ?? client.status})`;
      }
      try {
        await client.ping();
        return null;
      } catch (error) {
        return `Redis at ${where} does not answer (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
      }
    },
    async close() {
      client.disconnect();
    },
  };
}
