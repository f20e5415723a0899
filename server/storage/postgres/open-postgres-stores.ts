/**
 * Every store on one PostgreSQL database: one pool, the migrations applied (under their advisory lock), the
 * pepper checked against the database's, and the key change feed listening. `services.ts` calls this when
 * `OMNIGATE_DATABASE_URL` names a PostgreSQL database.
 */
import type { Logger } from 'pino';
import type { SharedBlobBytes } from '../blob-store.js';
import { createPostgresBlobStore } from './blob-store.js';
import { createPostgresFileStore } from './file-store.js';
import { type PostgresKeyChangeFeed, startPostgresKeyChangeFeed } from './key-change-feed.js';
import { checkPepper, createPostgresKeyStore } from './key-store.js';
import { migrate } from './migrations.js';
import { createPostgresProjectStore } from './project-store.js';
import { createPostgresPassageStore } from './passage-store.js';
import { createPostgresPool } from './pool.js';
import { createPostgresResponseStore } from './response-store.js';
import { createPostgresUsageStore } from './usage-store.js';
import { createPostgresVideoTaskStore } from './video-task-store.js';

export interface PostgresStoreOptions {
  url: string;
  pepper: Buffer;
  /** This instance's blob directory, or the shared byte store (`OMNIGATE_BLOB_URL`) with a local staging directory. */
  blobs: string | SharedBlobBytes;
  logger?: Pick<Logger, 'warn' | 'error'>;
  /** Connections in the pool. */
  poolSize?: number;
}

export async function openPostgresStores(options: PostgresStoreOptions) {
  const pool = createPostgresPool(options.url, {
    max: options.poolSize,
    onIdleError: (error) =>
      options.logger?.warn({ err: error }, 'a PostgreSQL connection failed; the pool replaces it'),
  });
  let feed: ReturnType<typeof startPostgresKeyChangeFeed> | undefined;
  try {
    await migrate(pool);
    await checkPepper(pool, options.pepper);
    feed = startPostgresKeyChangeFeed({
      url: options.url,
      onError: (error) => options.logger?.warn({ err: error }, 'key change feed lost its connection; reconnecting'),
    });
    await feed.ready;
    const keys = createPostgresKeyStore(pool, { pepper: options.pepper, changes: feed });
    const blobs = createPostgresBlobStore(pool, options.blobs);
    const usage = createPostgresUsageStore(pool);
    return {
      pool,
      keys,
      projects: createPostgresProjectStore(pool, { changes: feed }),
      keyChanges: feed as PostgresKeyChangeFeed,
      usage,
      /** Retention drops whole day partitions; the count is of partitions. */
      usageRetention: {
        purgeOlderThan: async (createdAt: number) => (await usage.partitions.dropOlderThan(createdAt)).length,
      },
      responses: createPostgresResponseStore(pool),
      files: createPostgresFileStore(pool),
      passages: createPostgresPassageStore(pool),
      videoTasks: createPostgresVideoTaskStore(pool),
      blobs,
      async close() {
        await feed?.close();
        await pool.end();
      },
    };
  } catch (error) {
    await feed?.close();
    await pool.end().catch(() => {});
    throw error;
  }
}
