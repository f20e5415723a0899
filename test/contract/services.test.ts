/**
 * The composition root (server/services.ts): what it opens where, and that `close()` leaves nothing unwritten
 * or open — the usage record queued last is in the database, and the database was closed (SQLite removes the
 * -wal file only on a clean close of its last connection).
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_FILE_SETTINGS, DEFAULT_VIDEO_RUNNER_SETTINGS } from '../../server/config.js';
import { DEFAULT_MEDIA_SETTINGS } from '../../server/engines/media-pool.js';
import { createLogger } from '../../server/logger.js';
import { openServices, openStores, type ServiceConfig } from '../../server/services.js';
import { PEPPER_FILE } from '../../server/storage/pepper.js';

const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) {
    rmSync(directory, { recursive: true, force: true });
  }
});

function freshDirectory(): string {
  const directory = mkdtempSync(path.join(tmpdir(), 'omnigate-services-'));
  directories.push(directory);
  return directory;
}

const config: ServiceConfig = {
  providers: [],
  models: [],
  aliases: {},
  routes: [],
  media: DEFAULT_MEDIA_SETTINGS,
  videos: DEFAULT_VIDEO_RUNNER_SETTINGS,
  files: DEFAULT_FILE_SETTINGS,
  mediaLinkTtlSeconds: 3600,
  responseRetentionDays: 30,
};
const logger = createLogger('silent');

const entry = {
  requestId: 'req_last_before_close',
  operation: 'createChatCompletion',
  modelRequested: 'local:chat',
  model: 'local:chat',
  provider: 'local',
  inputTokens: 3,
  outputTokens: 5,
  cachedInputTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
  units: null,
  media: null,
  status: 200,
  latencyMs: 1,
  createdAt: 1_767_225_600,
};

describe('services', () => {
  it('opens the database, the pepper and the blobs in the data directory, and close() writes the last usage record and closes the database', async () => {
    const dataDir = freshDirectory();
    const databasePath = path.join(dataDir, 'omnigate.sqlite');
    // A flush interval no test waits for: only close() can write the record.
    const services = await openServices(config, {
      logger,
      stores: { kind: 'data-dir', dataDir, databasePath },
      usageFlushIntervalMs: 3_600_000,
    });
    const { key, record } = await services.stores.keys.create({ name: 'owner' });
    const keyId = record.id;
    services.usage.record({ ...entry, keyId });
    expect(existsSync(`${databasePath}-wal`)).toBe(true);
    expect(existsSync(path.join(dataDir, PEPPER_FILE))).toBe(true);
    expect(services.stores.blobDirectory).toBe(path.join(dataDir, 'blobs'));

    await services.close();
    expect(services.stores.db.open).toBe(false);
    expect(existsSync(`${databasePath}-wal`)).toBe(false);
    await services.close(); // a second close is the first one's

    const reopened = await openStores({ kind: 'data-dir', dataDir, databasePath });
    try {
      expect((await reopened.keys.verify(key))?.id).toBe(keyId); // the same pepper, read back from the file
      const { records } = await reopened.usage.list({ keyId, limit: 10, order: 'asc' });
      expect(records.map((record) => [record.requestId, record.outputTokens])).toEqual([['req_last_before_close', 5]]);
    } finally {
      await reopened.close();
    }
  });

  it('a configuration the registry refuses throws its ConfigError after closing the database it opened', async () => {
    const dataDir = freshDirectory();
    const databasePath = path.join(dataDir, 'omnigate.sqlite');
    await expect(
      openServices(
        { ...config, aliases: { fast: 'local:chatt' } },
        { logger, stores: { kind: 'data-dir', dataDir, databasePath } },
      ),
    ).rejects.toThrow(ConfigError);
    expect(existsSync(databasePath)).toBe(true);
    expect(existsSync(`${databasePath}-wal`)).toBe(false);
  });

  it('in memory, writes nothing but blobs in a temporary directory that close() removes', async () => {
    const before = new Set(readdirSync(tmpdir()));
    const services = await openServices(config, { logger, stores: { kind: 'memory' } });
    const { blobDirectory } = services.stores;
    expect(before.has(path.basename(blobDirectory))).toBe(false);
    expect(existsSync(blobDirectory)).toBe(true);
    await services.close();
    expect(existsSync(blobDirectory)).toBe(false);
  });
});
