/**
 * Builds a real app for tests: the real contract, in-memory SQLite, the built-in local model plus any
 * providers a test configures, and a logger whose lines the test can read. Nothing is shared between apps.
 */
import { Writable } from 'node:stream';
import type { Express } from 'express';
import { createApp } from '../../server/app.js';
import type { Config } from '../../server/config.js';
import { createLogger } from '../../server/logger.js';
import { buildRegistry } from '../../server/providers/build-registry.js';
import type { ModelRegistry } from '../../server/providers/registry.js';
import { loadSpec, type LoadedSpec } from '../../server/spec/load-spec.js';
import { openDatabase, type SqliteDatabase } from '../../server/storage/database.js';
import { createKeyStore, type KeyStore } from '../../server/storage/key-store.js';
import { createResponseStore } from '../../server/storage/response-store.js';
import { createUsageStore } from '../../server/storage/usage-store.js';
import { createUsageRecorder, type UsageRecorder } from '../../server/usage/usage-recorder.js';

let cachedSpec: LoadedSpec | undefined;

export interface TestApp {
  app: Express;
  /** A valid API key (bearer secret). */
  key: string;
  keys: KeyStore;
  usage: UsageRecorder;
  registry: ModelRegistry;
  db: SqliteDatabase;
  /** Parsed JSON log lines written so far. */
  logs: Array<Record<string, unknown>>;
  shutdown: AbortController;
  /** Abort to start a graceful shutdown (health answers 503). */
  draining: AbortController;
}

export function createTestApp(
  config: Partial<Pick<Config, 'providers' | 'models' | 'aliases' | 'routes' | 'maxBodyBytes'>> & {
    /** The app's clock (ms since the epoch), for usage timestamps and latencies; defaults to Date.now. */
    now?: () => number;
  } = {},
): TestApp {
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
  const db = openDatabase(':memory:');
  const keys = createKeyStore(db);
  const { key } = keys.create({ name: 'test' });
  const usage = createUsageRecorder(createUsageStore(db), { flushIntervalMs: 10 });
  const registry = buildRegistry({ providers: config.providers ?? [], models: config.models ?? [], aliases: config.aliases ?? {}, routes: config.routes ?? [] }, logger);
  const shutdown = new AbortController();
  const draining = new AbortController();
  const app = createApp({
    spec: cachedSpec,
    keys,
    usage,
    responses: createResponseStore(db),
    registry,
    logger,
    maxBodyBytes: config.maxBodyBytes ?? 1024 * 1024,
    drainingSignal: draining.signal,
    shutdownSignal: shutdown.signal,
    now: config.now,
  });
  return { app, key, keys, usage, registry, db, logs, shutdown, draining };
}
