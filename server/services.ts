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
import { renewIndexingLeases, startIndexingLeases } from './calls/files/indexing-leases.js';
import { startVideoRunner, type VideoRunner } from './calls/video/video-runner.js';
import { type BlobLocation, type Config, ConfigError } from './config.js';
import { createBackgroundPool } from './engines/background-pool.js';
import { vectorRows } from './engines/embed/vector-rows.js';
import { LEXICAL_DEFAULT_DIMENSIONS } from './engines/embed/lexical-embed.js';
import { createMediaPool, type MediaPool } from './engines/media-pool.js';
import { createLocalEmbeddingModel } from './providers/local/embed.js';
import { buildRegistry } from './providers/build-registry.js';
import { createLocalSearchIndex, type LocalSearchIndex, type PassageEmbedder } from './providers/local/search-index.js';
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
import { createFileStore, type FileStore, type SqliteFileStore } from './storage/file-store.js';
import { createKeyCache, type KeyCache } from './storage/key-cache.js';
import type { KeyChangeFeed } from './storage/key-change-feed.js';
import { createKeyStore, type KeyStore } from './storage/key-store.js';
import { createMediaLinks, type MediaLinks } from './storage/media-links.js';
import { createPassageStore, type PassageStore } from './storage/passage-store.js';
import { createProjectCache, type ProjectCache } from './storage/project-cache.js';
import { createProjectStore, type ProjectStore } from './storage/project-store.js';
import { recordLimitsSource } from './limits/call-limiter.js';
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
      | 'searchEmbeddingModel'
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
  /**
   * A PostgreSQL database (`OMNIGATE_DATABASE_URL`): every row there; the pepper in the data directory (or
   * `pepperFile`), the blob bytes under `<dataDir>/blobs` or in the `blobs` location, as on SQLite.
   */
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
  /** Projects: named groups of keys with limits of their own. */
  projects: ProjectStore;
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
    // As on SQLite: the data directory's blobs, or the shared byte store with uploads staged locally.
    const blobDirectory = path.join(location.dataDir, location.blobs ? 'staging' : 'blobs');
    const bytes = location.blobs ? openByteStore(location.blobs) : undefined;
    let postgres: Awaited<ReturnType<typeof openPostgresStores>>;
    try {
      postgres = await openPostgresStores({
        url: location.url,
        pepper,
        blobs: bytes ? { bytes, stagingDirectory: blobDirectory } : blobDirectory,
        logger: location.logger,
      });
    } catch (error) {
      bytes?.close();
      throw error;
    }
    return {
      keys: postgres.keys,
      projects: postgres.projects,
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
      blobLocation: bytes?.location ?? blobDirectory,
      warnings,
      async close() {
        await postgres.close();
        bytes?.close();
      },
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
    // One byte quota per key over its files and the generated media kept for it, read inside each store's
    // insert transaction (both tables are in this one database): each store asks the other for its part.
    let files: SqliteFileStore | undefined;
    const blobs = createBlobStore(db, bytes ? { bytes, stagingDirectory: blobDirectory } : blobDirectory, {
      otherHeldBytes: (keyId, nowSeconds) => files?.fileBytesNow(keyId, nowSeconds) ?? 0,
    });
    files = createFileStore(db, { otherHeldBytes: (keyId, nowSeconds) => blobs.heldBytesNow(keyId, nowSeconds) });
    const openedBytes = bytes;
    const keyChanges = createSqliteKeyChangeFeed(db);
    return {
      db,
      keys: createKeyStore(db, { pepper, changes: keyChanges }),
      projects: createProjectStore(db, { changes: keyChanges }),
      keyChanges,
      usage: createUsageStore(db),
      responses: createResponseStore(db),
      files,
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
  /** Every project's limits in memory (the limiter reads them). */
  projectCache: ProjectCache;
  /** Prices, the limit counters and the call limiter. */
  limits: OpenedLimits;
  /** What `createApp` needs of the services; the caller adds the contract, limits, tool settings and signals. */
  appDeps: Pick<
    AppDeps,
    | 'keys'
    | 'projects'
    | 'projectCache'
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

/** The operation a usage record of the background embedding of a file's passages names (no route has it). */
export const PASSAGE_EMBEDDING_OPERATION = 'embedFilePassages';

/** What the background embedding of one key's passages did, for its usage record and limits. */
export interface PassageEmbedding {
  keyId: string;
  model: string;
  provider: string;
  inputTokens: number;
  startedAt: number;
  latencyMs: number;
}

/**
 * The embedding model of semantic file search as the search index calls it: resolved once at start (a name that
 * is no embedding model is a configuration error). A query's embedding is queued under the searching key and is
 * part of the search call; the background embedding of a key's passages is that key's own work, handed to
 * `account` (its usage record and limits) once it is done. With the built-in model the background batches run in
 * `backgroundPool` (the low-priority pool of engines/background-pool.ts) rather than the media pool, and on a
 * SQLite database file its worker reads the passages' texts itself; a query's
 * embedding, which a caller waits for, stays in the media pool.
 */
function passageEmbedder(
  registry: ModelRegistry,
  name: string,
  account: (embedding: PassageEmbedding) => void,
  now: () => number,
  backgroundPool: MediaPool,
): PassageEmbedder {
  let resolved: ReturnType<ModelRegistry['resolve']>;
  try {
    resolved = registry.resolve(name, 'embedding');
  } catch (error) {
    throw new ConfigError(`search.embedding_model: ${(error as Error).message}`);
  }
  const model = registry.model(resolved, 'embedding');
  const local = resolved.entry.provider === 'local';
  const passageModel = local ? createLocalEmbeddingModel(backgroundPool) : model;
  const call = (texts: string[], signal: AbortSignal, owner: string | undefined, by = model) =>
    by.embed(
      { inputs: texts, single: false, encodingFormat: 'float', extra: {} },
      { signal, requestId: 'search-index', ...(owner ? { owner } : {}), warn: () => undefined },
    );
  const accountFor = (keyId: string, startedAt: number, inputTokens: number) =>
    account({
      keyId,
      model: resolved.entry.id,
      provider: resolved.entry.provider,
      inputTokens,
      startedAt,
      latencyMs: Math.max(0, Math.round(now() - startedAt)),
    });
  return {
    model: resolved.entry.id,
    async embed(texts, signal, owner) {
      return (await call(texts, signal, owner)).embeddings;
    },
    async embedPassages(texts, signal, keyId) {
      const startedAt = now();
      const result = await call(texts, signal, keyId, passageModel);
      accountFor(keyId, startedAt, result.usage.inputTokens);
      return result.embeddings;
    },
    ...(local
      ? {
          async embedStoredPassages(database: string, ids: number[], signal: AbortSignal, keyId: string) {
            const startedAt = now();
            const dimensions = LEXICAL_DEFAULT_DIMENSIONS;
            const embedded = await backgroundPool.use(
              signal,
              (slot) => slot.run('embed-passages', { database, ids, dimensions }),
              { owner: keyId },
            );
            accountFor(keyId, startedAt, embedded.tokens);
            return vectorRows(embedded, dimensions);
          },
        }
      : {}),
  };
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
  // Only rows whose lease ran out: another instance (or worker) on the database may be indexing the others.
  await renewIndexingLeases({ files: stores.files, inFlight: () => [], logger, now: options.now });
  const keyCache = createKeyCache(stores.keys, stores.keyChanges, {
    onError: (error) => logger.error({ err: error }, 'reading the API keys failed; the cached keys stay in use'),
  });
  // Every project's limits in memory for the limiter, re-read when the key change feed says something changed.
  const projectCache = createProjectCache(stores.projects, stores.keyChanges, {
    onError: (error) => logger.error({ err: error }, 'reading the projects failed; the cached projects stay in use'),
  });
  await projectCache.reload();
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
  const stopIndexingLeases = startIndexingLeases({
    files: stores.files,
    inFlight: () => searchIndex.inFlight(),
    logger,
    now: options.now,
  });
  // No worker exists until the first generation; the registry closes the pool with the local models.
  const mediaPool = createMediaPool(config.media);
  // The background embedding of uploads with the built-in model (no worker until the first batch).
  const backgroundPool = createBackgroundPool();
  let registry: ModelRegistry;
  let embedder: PassageEmbedder | undefined;
  try {
    registry = buildRegistry(config, logger, searchIndex, mediaPool);
    if (config.searchEmbeddingModel) {
      embedder = passageEmbedder(
        registry,
        config.searchEmbeddingModel,
        (embedding) => accountPassageEmbedding(embedding),
        options.now ?? Date.now,
        backgroundPool,
      );
    }
  } catch (error) {
    stopIndexingLeases();
    keyCache.close();
    projectCache.close();
    await Promise.allSettled([mediaPool.close(), searchIndex.close(), backgroundPool.close()]);
    await usage.close();
    await stores.close();
    throw error;
  }
  const limitSettings = config.limits ?? { defaults: {}, onStoreDown: 'allow' as const, leaseMs: 300_000 };
  const limits = openLimits({
    settings: limitSettings,
    prices: config.prices ?? {},
    registry,
    providerUrls: Object.fromEntries(config.providers.map((provider) => [provider.id, provider.base_url])),
    logger,
    source: options.limitsSource ?? recordLimitsSource(limitSettings.defaults, (name) => projectCache.limitsOf(name)),
    redisPrefix: options.redisPrefix,
    now: options.now,
  });
  // The background embedding of a file's passages is its owner's work: one usage record per embedding call
  // (GET /v1/usage lists it under `embedFilePassages`), and its tokens and cost count in the key's limits.
  const accountPassageEmbedding = (embedding: PassageEmbedding) => {
    const facts = {
      operation: PASSAGE_EMBEDDING_OPERATION,
      modelRequested: config.searchEmbeddingModel ?? null,
      model: embedding.model,
      provider: embedding.provider,
      usage: { inputTokens: embedding.inputTokens, outputTokens: 0 },
      units: null,
      media: null,
    };
    const costUsd = limits.costOf(facts);
    usage.record({
      requestId: `embed_${randomBytes(12).toString('hex')}`,
      keyId: embedding.keyId,
      operation: PASSAGE_EMBEDDING_OPERATION,
      modelRequested: facts.modelRequested,
      model: embedding.model,
      provider: embedding.provider,
      inputTokens: embedding.inputTokens,
      outputTokens: 0,
      cachedInputTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
      units: null,
      media: null,
      costUsd,
      status: 200,
      latencyMs: embedding.latencyMs,
      createdAt: Math.floor(embedding.startedAt / 1000),
    });
    void stores.keys
      .get(embedding.keyId)
      .then((key) => (key ? limits.limiter.charge({ key, tokens: embedding.inputTokens, costUsd }) : undefined))
      .catch((error: unknown) =>
        logger.warn({ err: error, keyId: embedding.keyId }, 'counting a background embedding in the key limits failed'),
      );
  };
  if (embedder) {
    searchIndex.useEmbedder(embedder);
  }
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
    projectCache,
    appDeps: {
      keys: stores.keys,
      projects: stores.projects,
      projectCache,
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
        stopIndexingLeases();
        await stopVideos(0);
        keyCache.close();
        projectCache.close();
        await usage.close();
        await limits.close();
        await registry.close();
        await searchIndex.close();
        await backgroundPool.close();
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
