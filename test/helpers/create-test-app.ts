/**
 * Builds a real app for tests: the real contract, in-memory SQLite, the built-in local model plus any
 * providers a test configures, and a logger whose lines the test can read. Nothing is shared between apps.
 */
import { adminKeyCheck } from '../../server/auth/admin-key.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { Express } from 'express';
import { createApp } from '../../server/app.js';
import type { BlobLocation, Config } from '../../server/config.js';
import { createLogger } from '../../server/logger.js';
import { DEFAULT_MEDIA_SETTINGS, type MediaPool } from '../../server/engines/media-pool.js';
import type { ModelRegistry } from '../../server/providers/registry.js';
import { loadSpec, type LoadedSpec } from '../../server/spec/load-spec.js';
import type { SqliteDatabase } from '../../server/storage/database.js';
import type { BlobStore } from '../../server/storage/blob-store.js';
import type { KeyStore } from '../../server/storage/key-store.js';
import type { VideoTaskStore } from '../../server/storage/video-task-store.js';
import type { FileStore } from '../../server/storage/file-store.js';
import type { FileIndex } from '../../server/core/file-index.js';
import { DEFAULT_FILE_SETTINGS, type FileSettings } from '../../server/config.js';
import type { LocalSearchIndex } from '../../server/providers/local/search-index.js';
import type { VideoRunner } from '../../server/calls/video/video-runner.js';
import { DEFAULT_VIDEO_RUNNER_SETTINGS, type VideoRunnerSettings } from '../../server/config.js';
import type { UsageRecorder } from '../../server/usage/usage-recorder.js';
import type { ToolSettings } from '../../server/tools/tool-definition.js';
import { openServices, type Services } from '../../server/services.js';
import type { LimitsSource } from '../../server/limits/call-limiter.js';

let cachedSpec: LoadedSpec | undefined;

/**
 * Test apps never ask the real DNS: an image URL's host (a spec example such as images.example.com) is unknown,
 * so tests stay on loopback. `localhost` is the only name; tests that need a name pass their own resolver.
 */
async function offlineDns(hostname: string): Promise<Array<{ address: string; family: 4 | 6 }>> {
  if (hostname === 'localhost') {
    return [{ address: '127.0.0.1', family: 4 }];
  }
  throw Object.assign(new Error(`${hostname} is not resolved in tests (offline DNS)`), { code: 'ENOTFOUND' });
}

export interface TestApp {
  app: Express;
  /** A valid API key (bearer secret). */
  key: string;
  /** Its id (usage records, stored rows). */
  keyId: string;
  keys: KeyStore;
  usage: UsageRecorder;
  registry: ModelRegistry;
  /** The media engines' pool (the local models' and image_understanding's); tests hold its slots to make it busy. */
  mediaPool: MediaPool;
  db: SqliteDatabase;
  /** Where media answered by URL is kept (a fresh temporary directory). */
  blobs: BlobStore;
  /** The directory behind `blobs` (with a `blobs` location: where uploads are staged). */
  blobDirectory: string;
  videoTasks: VideoTaskStore;
  videoRunner: VideoRunner;
  files: FileStore;
  /** The local search index (`deps.search.index`); tests index files with `add` directly. */
  searchIndex: LocalSearchIndex;
  /** Parsed JSON log lines written so far. */
  logs: Array<Record<string, unknown>>;
  shutdown: AbortController;
  /** Abort to start a graceful shutdown (health answers 503). */
  draining: AbortController;
  /** Everything above but the app, as the server builds it (server/services.ts); `services.close()` ends it all. */
  services: Services;
}

export async function createTestApp(
  config: Partial<
    Pick<
      Config,
      | 'providers'
      | 'models'
      | 'aliases'
      | 'routes'
      | 'maxBodyBytes'
      | 'transcription'
      | 'media'
      | 'mediaLinkTtlSeconds'
      | 'publicUrl'
      | 'defaultSearchModel'
      | 'searchEmbeddingModel'
      | 'defaultChatModel'
      | 'circuitBreaker'
      | 'limits'
      | 'prices'
    >
  > & {
    /** Per-key limits for the test (the config's defaults over each key's own otherwise). */
    limitsSource?: LimitsSource;
    /** The limit counters' Redis key prefix (with `limits.redisUrl`). */
    redisPrefix?: string;
    /** The app's clock (ms since the epoch), for usage timestamps and latencies; defaults to Date.now. */
    now?: () => number;
    /** The video queue's settings (a create wakes the runner at once; the poll finds retries and lost leases). */
    videos?: Partial<VideoRunnerSettings>;
    /** Upload limit and per-key quotas of `/v1/files`, and the index it tells (the app's search index by default). */
    files?: Partial<FileSettings> & { index?: FileIndex };
    /** MCP allowed origins, and a DNS stand-in for image URLs (to reach the SSRF guard with a public-looking name). */
    tools?: ToolSettings;
    /** `OMNIGATE_ADMIN_KEY` (admin operations such as `GET /metrics`); none by default. */
    adminKey?: string;
    /** The search index's extraction pool (its own one-worker pool by default): tests hold its slot to keep files `indexing`. */
    searchIndexPool?: MediaPool;
    /** Where blob bytes go (a shared directory, S3); a fresh temporary directory of the app's own by default. */
    blobs?: BlobLocation;
    /** A pepper file (`OMNIGATE_PEPPER_FILE`); a random pepper by default. */
    pepperFile?: string;
    /** A built web console to serve at `/console`; none by default. */
    consoleDir?: string;
    /**
     * The stores in a SQLite database file in a fresh data directory, as a server keeps them (the extraction
     * worker then writes the search passages itself); in memory by default.
     */
    databaseFile?: boolean;
  } = {},
): Promise<TestApp> {
  cachedSpec ??= loadSpec();
  const logs: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.trim()) {
          logs.push(JSON.parse(line) as Record<string, unknown>);
        }
      }
      callback();
    },
  });
  const logger = createLogger('debug', sink);
  const { index: fileIndex, ...fileSettings } = config.files ?? {};
  const services = await openServices(
    {
      providers: config.providers ?? [],
      models: config.models ?? [],
      aliases: config.aliases ?? {},
      routes: config.routes ?? [],
      media: config.media ?? DEFAULT_MEDIA_SETTINGS,
      videos: { ...DEFAULT_VIDEO_RUNNER_SETTINGS, ...config.videos },
      files: { ...DEFAULT_FILE_SETTINGS, ...fileSettings },
      mediaLinkTtlSeconds: config.mediaLinkTtlSeconds ?? 3600,
      // Read only by the purge, which test apps do not run.
      responseRetentionDays: 30,
      publicUrl: config.publicUrl,
      defaultSearchModel: config.defaultSearchModel,
      searchEmbeddingModel: config.searchEmbeddingModel,
      defaultChatModel: config.defaultChatModel,
      circuitBreaker: config.circuitBreaker,
      limits: config.limits,
      prices: config.prices,
      transcription: config.transcription,
    },
    {
      limitsSource: config.limitsSource,
      redisPrefix: config.redisPrefix,
      logger,
      stores: config.databaseFile
        ? (() => {
            const dataDir = mkdtempSync(path.join(tmpdir(), 'omnigate-test-data-'));
            return {
              kind: 'data-dir' as const,
              dataDir,
              databasePath: path.join(dataDir, 'omnigate.sqlite'),
              blobs: config.blobs,
              pepperFile: config.pepperFile,
            };
          })()
        : {
            kind: 'memory',
            blobDirectory: mkdtempSync(path.join(tmpdir(), 'omnigate-test-blobs-')),
            blobs: config.blobs,
            pepperFile: config.pepperFile,
          },
      usageFlushIntervalMs: 10,
      now: config.now,
      searchIndexPool: config.searchIndexPool,
    },
  );
  const { key, record } = await services.stores.keys.create({ name: 'test' });
  const shutdown = new AbortController();
  const draining = new AbortController();
  const app = createApp({
    ...services.appDeps,
    spec: cachedSpec,
    ...(fileIndex ? { files: { ...services.appDeps.files, index: fileIndex } } : {}),
    maxBodyBytes: config.maxBodyBytes ?? 1024 * 1024,
    consoleDir: config.consoleDir,
    drainingSignal: draining.signal,
    shutdownSignal: shutdown.signal,
    now: config.now,
    tools: { resolveHost: offlineDns, ...config.tools },
    adminKey: adminKeyCheck(config.adminKey),
  });
  const { stores } = services;
  return {
    app,
    key,
    keyId: record.id,
    keys: stores.keys,
    usage: services.usage,
    registry: services.registry,
    mediaPool: services.mediaPool,
    // Test apps are always on SQLite (in memory).
    db: stores.db!,
    blobs: stores.blobs,
    blobDirectory: stores.blobDirectory,
    videoTasks: stores.videoTasks,
    videoRunner: services.videoRunner,
    files: stores.files,
    searchIndex: services.searchIndex,
    logs,
    shutdown,
    draining,
    services,
  };
}
