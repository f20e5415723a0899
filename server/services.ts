/**
 * The composition root: the one place where the server's stores, pools, caches, model registry and video
 * runner are made from configuration, wired to each other, and closed in order. `main.ts`, the tests' app
 * (test/helpers/create-test-app.ts) and `omnigate config check` all build through here, so what a test runs
 * is what the server runs. Stores are chosen and opened in `openStores` alone: a new backend (PostgreSQL,
 * Redis) is one more kind of `StoreLocation` there, and nothing above it changes.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import { startVideoRunner, type VideoRunner } from './calls/video/video-runner.js';
import type { BlobLocation, Config } from './config.js';
import { createMediaPool, type MediaPool } from './engines/media-pool.js';
import { buildRegistry } from './providers/build-registry.js';
import { createLocalSearchIndex, type LocalSearchIndex } from './providers/local/search-index.js';
import type { ModelRegistry } from './providers/registry.js';
import type { AppDeps } from './routes/app-deps.js';
import { startBlobPurge } from './storage/blob-expiry.js';
import { type BlobStore, createBlobStore } from './storage/blob-store.js';
import type { ByteStore } from './storage/bytes/byte-store.js';
import { openByteStore } from './storage/bytes/open-byte-store.js';
import { openDatabase, type SqliteDatabase } from './storage/database.js';
import { databaseProblem } from './storage/database-health.js';
import { openPostgresStores } from './storage/postgres/open-postgres-stores.js';
import { postgresProblem } from './storage/postgres/database-health.js';
import { createSqliteUsageRetention, startUsagePurge, type UsageRetention } from './storage/usage-retention.js';
import { createFileStore, type FileStore } from './storage/file-store.js';
import { createKeyCache, type KeyCache } from './storage/key-cache.js';
import type { KeyChangeFeed } from './storage/key-change-feed.js';
import { createKeyStore, type KeyStore } from './storage/key-store.js';
import { createMediaLinks, type MediaLinks } from './storage/media-links.js';
import { createPassageStore, type PassageStore } from './storage/passage-store.js';
import { loadPepper } from './storage/pepper.js';
import { startResponsePurge } from './storage/response-retention.js';
import { createResponseStore, type ResponseStore } from './storage/response-store.js';
import { createSqliteKeyChangeFeed } from './storage/sqlite-key-change-feed.js';
import { createUsageStore, type UsageStore } from './storage/usage-store.js';
import { createVideoTaskStore, type VideoTaskStore } from './storage/video-task-store.js';
import { closeSharedEncoder } from './tokens/encoder-client.js';
import { createUsageRecorder, type UsageRecorder } from './usage/usage-recorder.js';
import type { LimitsSource } from './limits/call-limiter.js';
import { type OpenedLimits, openLimits } from './limits/open-limits.js';

/** The part of the configuration the services are made from (the rest is the process's: port, timeouts). */
export type ServiceConfig = Pick<
  Config,
  | 'providers'
  | 'models'
  | 'aliases'
  | 'routes'
  | 'media'
  | 'videos'
  | 'files'
  | 'mediaLinkTtlSeconds'
  | 'responseRetentionDays'
> &
  Partial<
    Pick<
      Config,
      | 'extractionPerKey'
      | 'transcription'
      | 'indexLimits'
      | 'defaultChatModel'
      | 'defaultSearchModel'
      | 'agentRoutes'
      | 'publicUrl'
      | 'usageBufferMax'
      | 'usageRetentionDays'
      | 'circuitBreaker'
      | 'redisUrl'
      | 'limits'
      | 'prices'
    >
  >;

/**
 * Where the stores live. `data-dir` is the server's: the SQLite file, the pepper beside it and the blobs under
 * `<dataDir>/blobs`. `memory` is an in-memory database and a random pepper, with the blobs in `blobDirectory` or,
 * when none is given, in a temporary directory removed when the stores close (tests, and `omnigate config
 * check`, which must not create a data directory).
 *
 * Either may name a `blobs` location instead (`OMNIGATE_BLOB_URL`: a shared directory or S3), whose bytes this
 * instance shares with others; uploads are then staged in `<dataDir>/staging` (or in `blobDirectory` or the
 * temporary directory). Either may name a `pepperFile` (`OMNIGATE_PEPPER_FILE`) all instances share.
 */
export type StoreLocation = (
  | { kind: 'data-dir'; dataDir: string; databasePath: string }
  | { kind: 'memory'; blobDirectory?: string }
  /** A PostgreSQL database (`OMNIGATE_DATABASE_URL`); its blobs stay in the data directory for now. */
  | { kind: 'postgres'; url: string; dataDir: string; logger?: Logger }
) & { blobs?: BlobLocation; pepperFile?: string };

/** Every store, by aggregate, over one database. */
export interface Stores {
  /** The SQLite database; undefined when the stores are on PostgreSQL. */
  db?: SqliteDatabase;
  /** Null when the database works, else what is wrong (the readiness check). */
  problem(): Promise<string | null>;
  /** Deletes old usage records (OMNIGATE_USAGE_RETENTION_DAYS): batched deletes on SQLite, day partitions on PostgreSQL. */
  usageRetention: UsageRetention;
  keys: KeyStore;
  /** Where key changes are announced and heard (the key cache listens): every instance on the database. */
  keyChanges: KeyChangeFeed;
  usage: UsageStore;
  responses: ResponseStore;
  files: FileStore;
  passages: PassageStore;
  videoTasks: VideoTaskStore;
  blobs: BlobStore;
  /** Signed media links, keyed from the pepper. */
  links: MediaLinks;
  /** The directory the blobs are kept in or, with a `blobs` location, the one uploads are staged in. */
  blobDirectory: string;
  /** Where the blob bytes are (a path or `s3://bucket/prefix`), for the start log. */
  blobLocation: string;
  /** What opening found worth an operator's attention (a pepper file others can read); logged by the caller. */
  warnings: string[];
  /** Stops the key change feed, releases the byte store's connections and closes the database; called last. */
  close(): Promise<void>;
}

/**
 * Opens the stores at `location`: the one place a store's backend is chosen. Every store's methods are
 * asynchronous (`Promise`s), whatever the backend, so nothing above this changes with it.
 */
export async function openStores(location: StoreLocation): Promise<Stores> {
  if (location.kind === 'postgres') {
    const warnings: string[] = [];
    const pepper = loadPepper(location.dataDir, {
      file: location.pepperFile,
      warn: (message: string) => warnings.push(message),
    });
    const blobDirectory = path.join(location.dataDir, 'blobs');
    const postgres = await openPostgresStores({ url: location.url, pepper, blobDirectory, logger: location.logger });
    return {
      keys: postgres.keys,
      keyChanges: postgres.keyChanges,
      usage: postgres.usage,
      responses: postgres.responses,
      files: postgres.files,
      passages: postgres.passages,
      videoTasks: postgres.videoTasks,
      blobs: postgres.blobs,
      links: createMediaLinks(pepper),
      blobDirectory,
      usageRetention: postgres.usageRetention,
      problem: () => postgresProblem(postgres.pool),
      blobLocation: blobDirectory,
      warnings,
      close: () => postgres.close(),
    };
  }
  const memory = location.kind === 'memory';
  const db = openDatabase(memory ? ':memory:' : location.databasePath);
  let bytes: ByteStore | undefined;
  try {
    const warnings: string[] = [];
    const warn = (message: string) => warnings.push(message);
    const pepper =
      memory && !location.pepperFile
        ? randomBytes(32)
        : loadPepper(memory ? '' : location.dataDir, { file: location.pepperFile, warn });
    const temporary =
      memory && !location.blobDirectory ? mkdtempSync(path.join(tmpdir(), 'omnigate-blobs-')) : undefined;
    const shared = location.blobs !== undefined;
    const blobDirectory = memory
      ? (location.blobDirectory ?? temporary!)
      : path.join(location.dataDir, shared ? 'staging' : 'blobs');
    bytes = location.blobs ? openByteStore(location.blobs) : undefined;
    const blobs = createBlobStore(db, bytes ? { bytes, stagingDirectory: blobDirectory } : blobDirectory);
    const openedBytes = bytes;
    const keyChanges = createSqliteKeyChangeFeed(db);
    return {
      db,
      keys: createKeyStore(db, { pepper, changes: keyChanges }),
      keyChanges,
      usage: createUsageStore(db),
      responses: createResponseStore(db),
      // One byte quota per key over its files and the generated media kept for it.
      // (Read synchronously inside the file store's quota transaction: both tables are in this one database.)
      files: createFileStore(db, { otherHeldBytes: (keyId, nowSeconds) => blobs.heldBytesNow(keyId, nowSeconds) }),
      passages: createPassageStore(db),
      videoTasks: createVideoTaskStore(db),
      blobs,
      links: createMediaLinks(pepper),
      blobDirectory,
      usageRetention: createSqliteUsageRetention(db),
      problem: async () => databaseProblem(db, memory ? ':memory:' : location.databasePath),
      blobLocation: openedBytes?.location ?? blobDirectory,
      warnings,
      async close() {
        await keyChanges.close();
        openedBytes?.close();
        db.close();
        if (temporary) {
          rmSync(temporary, { recursive: true, force: true });
        }
      },
    };
  } catch (error) {
    bytes?.close();
    db.close();
    throw error;
  }
}

export interface ServiceOptions {
  logger: Logger;
  stores: StoreLocation;
  /** Purge expired stored responses and media now and periodically (the server does; tests and checks do not). */
  purge?: boolean;
  /** How long a usage record may wait before its batch is written (the recorder's default when absent). */
  usageFlushIntervalMs?: number;
  /** The clock (ms since the epoch) of the video runner; Date.now when absent. */
  now?: () => number;
  /** The search index's extraction pool (tests hold its one worker); a one-worker pool of its own when absent. */
  searchIndexPool?: MediaPool;
  /** Where each key's limits come from (tests inject per-key limits); the config's defaults over the key's own by default. */
  limitsSource?: LimitsSource;
  /** Prefix of the limit counters' Redis keys (tests give each run its own). */
  redisPrefix?: string;
}

export interface Services {
  stores: Stores;
  /** The verified keys in memory (what authentication reads), kept fresh by `stores.keyChanges`. */
  keyCache: KeyCache;
  /** The batched usage recorder over `stores.usage`. */
  usage: UsageRecorder;
  /** The local search index over `stores.passages` (what `local:search` reads and file storage tells). */
  searchIndex: LocalSearchIndex;
  /** The built-in engines' worker pool: the local models' and image_understanding's (closed with the registry). */
  mediaPool: MediaPool;
  registry: ModelRegistry;
  videoRunner: VideoRunner;
  /** Prices, the limit counters and the call limiter. */
  limits: OpenedLimits;
  /** What `createApp` needs of the services; the caller adds the contract, limits, tool settings and signals. */
  appDeps: Pick<
    AppDeps,
    | 'keys'
    | 'keyCache'
    | 'usage'
    | 'responses'
    | 'registry'
    | 'mediaPool'
    | 'media'
    | 'videos'
    | 'files'
    | 'search'
    | 'logger'
    | 'limiter'
    | 'costOf'
    | 'transcription'
  >;
  /**
   * Stops the video runner: no new claims, running tasks get `graceMs` and are then handed back to the queue.
   * The server calls it when shutdown begins, beside closing its listener; `close` waits for the same stop.
   */
  stopVideos(graceMs: number): Promise<void>;
  /**
   * Closes everything in order, after the HTTP listener has stopped taking requests: purges and the video
   * runner stop (the runner amends usage records, so it ends first), the key cache stops listening, the usage
   * recorder writes what it holds, the registry closes its providers and the media pool, then the search index
   * and the tokenizer's thread; records queued meanwhile (a stream cut short counts its tokens first) are
   * written, and the key change feed and the database close last.
   */
  close(): Promise<void>;
}

/**
 * Opens the stores and builds everything over them. A configuration the registry refuses (an alias or route
 * naming a model that does not exist) throws its ConfigError here, after closing what was opened.
 */
export async function openServices(config: Readonly<ServiceConfig>, options: ServiceOptions): Promise<Services> {
  const { logger } = options;
  const stores = await openStores(options.stores);
  for (const warning of stores.warnings) {
    logger.warn(warning);
  }
  // A row left `indexing` by a process that stopped mid-extraction would say so forever: it was never finished.
  await stores.files.abandonIndexing({
    status: 'failed',
    code: 'interrupted',
    reason: 'The server restarted while the file was being indexed; upload it again to index it.',
  });
  const keyCache = createKeyCache(stores.keys, stores.keyChanges, {
    onError: (error) => logger.error({ err: error }, 'reading the API keys failed; the cached keys stay in use'),
  });
  const usage = createUsageRecorder(stores.usage, {
    flushIntervalMs: options.usageFlushIntervalMs,
    maxBuffered: config.usageBufferMax,
    logger,
  });
  const searchIndex = createLocalSearchIndex({
    passages: stores.passages,
    logger,
    perKeyLimit: config.extractionPerKey,
    limits: config.indexLimits,
    pool: options.searchIndexPool,
  });
  // No worker exists until the first generation; the registry closes the pool with the local models.
  const mediaPool = createMediaPool(config.media);
  let registry: ModelRegistry;
  try {
    registry = buildRegistry(config, logger, searchIndex, mediaPool);
  } catch (error) {
    keyCache.close();
    await Promise.allSettled([mediaPool.close(), searchIndex.close()]);
    await usage.close();
    await stores.close();
    throw error;
  }
  const limits = openLimits({
    settings: config.limits ?? { defaults: {}, onStoreDown: 'allow', leaseMs: 300_000 },
    prices: config.prices ?? {},
    registry,
    providerUrls: Object.fromEntries(config.providers.map((provider) => [provider.id, provider.base_url])),
    logger,
    source: options.limitsSource,
    redisPrefix: options.redisPrefix,
    now: options.now,
  });
  const stopPurges = options.purge ? startPurges(config, stores, logger) : () => {};
  const storage = {
    maxBytes: config.files.quotaBytes,
    held: async (keyId: string, nowSeconds: number) => (await stores.files.holdings(keyId, nowSeconds)).bytes,
  };
  const videoRunner = startVideoRunner({
    tasks: stores.videoTasks,
    blobs: stores.blobs,
    storage,
    registry,
    usage,
    logger,
    settings: config.videos,
    now: options.now,
  });
  let videosStopped: Promise<void> | undefined;
  const stopVideos = (graceMs: number) => {
    videosStopped ??= videoRunner.stop(graceMs);
    return videosStopped;
  };
  let closed: Promise<void> | undefined;
  return {
    stores,
    keyCache,
    usage,
    searchIndex,
    mediaPool,
    registry,
    videoRunner,
    limits,
    appDeps: {
      keys: stores.keys,
      keyCache,
      usage,
      responses: stores.responses,
      registry,
      mediaPool,
      media: {
        blobs: stores.blobs,
        links: stores.links,
        linkTtlSeconds: config.mediaLinkTtlSeconds,
        publicUrl: config.publicUrl,
        storage,
      },
      videos: { tasks: stores.videoTasks, runner: videoRunner, maxActivePerKey: config.videos.maxActivePerKey },
      files: { store: stores.files, index: searchIndex, ...config.files },
      search: {
        index: searchIndex,
        defaultSearchModel: config.defaultSearchModel,
        defaultAnswerModel: config.defaultChatModel,
      },
      logger,
      limiter: limits.limiter,
      costOf: limits.costOf,
      transcription: config.transcription,
    },
    stopVideos,
    close() {
      closed ??= (async () => {
        stopPurges();
        await stopVideos(0);
        keyCache.close();
        await usage.close();
        await limits.close();
        await registry.close();
        await searchIndex.close();
        // The tokenizer thread does not hold the process (unref'd), but ends here with the other workers; the
        // encoder stays usable (a later count starts a new thread), so closing one test app harms no other.
        await closeSharedEncoder();
        // A stream cut short by the shutdown queues its record after counting its tokens, which may be after the
        // close above: written here, last before the database.
        await usage.flush();
        await stores.close();
      })();
      return closed;
    },
  };
}

/** The purges of expired stored responses and expired media; returns the function that stops both. */
function startPurges(config: Readonly<ServiceConfig>, stores: Stores, logger: Logger): () => void {
  const stopResponsePurge = startResponsePurge(stores.responses, {
    retentionDays: config.responseRetentionDays,
    onPurge: (count) =>
      logger.info({ count, retentionDays: config.responseRetentionDays }, 'purged expired stored responses'),
  });
  const stopBlobPurge = startBlobPurge(stores.blobs, {
    onPurge: (count) => logger.info({ count }, 'deleted expired media'),
    onError: (error) => logger.error({ err: error }, 'deleting expired media failed; will retry'),
  });
  const retentionDays = config.usageRetentionDays;
  const stopUsagePurge =
    retentionDays === undefined
      ? () => {}
      : startUsagePurge(stores.usageRetention, {
          retentionDays,
          onPurge: (count) => logger.info({ count, retentionDays }, 'purged old usage records'),
          onError: (error) => logger.error({ err: error }, 'purging old usage records failed; will retry'),
        });
  return () => {
    stopResponsePurge();
    stopBlobPurge();
    stopUsagePurge();
  };
}
