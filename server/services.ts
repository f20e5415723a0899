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
import type { Config } from './config.js';
import { createMediaPool, type MediaPool } from './engines/media-pool.js';
import { buildRegistry } from './providers/build-registry.js';
import { createLocalSearchIndex, type LocalSearchIndex } from './providers/local/search-index.js';
import type { ModelRegistry } from './providers/registry.js';
import type { AppDeps } from './routes/app-deps.js';
import { startBlobPurge } from './storage/blob-expiry.js';
import { type BlobStore, createBlobStore } from './storage/blob-store.js';
import { openDatabase, type SqliteDatabase } from './storage/database.js';
import { createFileStore, type FileStore } from './storage/file-store.js';
import { createKeyStore, type KeyStore } from './storage/key-store.js';
import { createMediaLinks, type MediaLinks } from './storage/media-links.js';
import { createPassageStore, type PassageStore } from './storage/passage-store.js';
import { loadPepper } from './storage/pepper.js';
import { startResponsePurge } from './storage/response-retention.js';
import { createResponseStore, type ResponseStore } from './storage/response-store.js';
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
      | 'indexLimits'
      | 'defaultChatModel'
      | 'defaultSearchModel'
      | 'agentRoutes'
      | 'publicUrl'
      | 'limits'
      | 'prices'
    >
  >;

/**
 * Where the stores live. `data-dir` is the server's: the SQLite file, the pepper beside it and the blobs under
 * `<dataDir>/blobs`. `memory` is an in-memory database and a random pepper, with the blobs in `blobDirectory` or,
 * when none is given, in a temporary directory removed when the stores close (tests, and `omnigate config
 * check`, which must not create a data directory).
 */
export type StoreLocation =
  | { kind: 'data-dir'; dataDir: string; databasePath: string }
  | { kind: 'memory'; blobDirectory?: string };

/** Every store, by aggregate, over one database. */
export interface Stores {
  db: SqliteDatabase;
  keys: KeyStore;
  usage: UsageStore;
  responses: ResponseStore;
  files: FileStore;
  passages: PassageStore;
  videoTasks: VideoTaskStore;
  blobs: BlobStore;
  /** Signed media links, keyed from the pepper. */
  links: MediaLinks;
  /** The directory the blobs are kept in. */
  blobDirectory: string;
  /** Closes the database; called last. */
  close(): void;
}

/** Opens the stores at `location`: the one place a store's backend is chosen. */
export function openStores(location: StoreLocation): Stores {
  const memory = location.kind === 'memory';
  const db = openDatabase(memory ? ':memory:' : location.databasePath);
  try {
    const pepper = memory ? randomBytes(32) : loadPepper(location.dataDir);
    const temporary =
      memory && !location.blobDirectory ? mkdtempSync(path.join(tmpdir(), 'omnigate-blobs-')) : undefined;
    const blobDirectory = memory ? (location.blobDirectory ?? temporary!) : path.join(location.dataDir, 'blobs');
    const blobs = createBlobStore(db, blobDirectory);
    return {
      db,
      keys: createKeyStore(db, { pepper }),
      usage: createUsageStore(db),
      responses: createResponseStore(db),
      // One byte quota per key over its files and the generated media kept for it.
      files: createFileStore(db, { otherHeldBytes: (keyId, nowSeconds) => blobs.heldBytes(keyId, nowSeconds) }),
      passages: createPassageStore(db),
      videoTasks: createVideoTaskStore(db),
      blobs,
      links: createMediaLinks(pepper),
      blobDirectory,
      close() {
        db.close();
        if (temporary) {
          rmSync(temporary, { recursive: true, force: true });
        }
      },
    };
  } catch (error) {
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
  >;
  /**
   * Stops the video runner: no new claims, running tasks get `graceMs` and are then handed back to the queue.
   * The server calls it when shutdown begins, beside closing its listener; `close` waits for the same stop.
   */
  stopVideos(graceMs: number): Promise<void>;
  /**
   * Closes everything in order, after the HTTP listener has stopped taking requests: purges and the video
   * runner stop (the runner amends usage records, so it ends first), the usage recorder writes what it holds,
   * the registry closes its providers and the media pool, then the search index and the tokenizer's thread,
   * and the database closes last.
   */
  close(): Promise<void>;
}

/**
 * Opens the stores and builds everything over them. A configuration the registry refuses (an alias or route
 * naming a model that does not exist) throws its ConfigError here, after closing what was opened.
 */
export function openServices(config: Readonly<ServiceConfig>, options: ServiceOptions): Services {
  const { logger } = options;
  const stores = openStores(options.stores);
  const usage = createUsageRecorder(stores.usage, {
    flushIntervalMs: options.usageFlushIntervalMs,
    onError: (error, lost) => logger.error({ err: error, pending: lost }, 'usage batch write failed; will retry'),
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
    void mediaPool.close();
    void searchIndex.close();
    usage.close();
    stores.close();
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
    held: (keyId: string, nowSeconds: number) => stores.files.holdings(keyId, nowSeconds).bytes,
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
    usage,
    searchIndex,
    mediaPool,
    registry,
    videoRunner,
    limits,
    appDeps: {
      keys: stores.keys,
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
    },
    stopVideos,
    close() {
      closed ??= (async () => {
        stopPurges();
        await stopVideos(0);
        usage.close();
        await limits.close();
        await registry.close();
        await searchIndex.close();
        // The tokenizer thread does not hold the process (unref'd), but ends here with the other workers; the
        // encoder stays usable (a later count starts a new thread), so closing one test app harms no other.
        await closeSharedEncoder();
        stores.close();
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
  return () => {
    stopResponsePurge();
    stopBlobPurge();
  };
}
