/**
 * The database going away under open stores: every call that needs it rejects with DatabaseUnavailableError
 * (503 `database_unavailable`, the error handler's documented envelope), not a raw driver error that would be a
 * 500; the pool recovers by itself when the database is back. The PostgreSQL here is the test's own, stopped and
 * started at will; the machine's shared server is never touched.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseUnavailableError } from '../../server/core/database-unavailable.js';
import type { KeyChange } from '../../server/storage/key-change-feed.js';
import { openPostgresStores } from '../../server/storage/postgres/open-postgres-stores.js';
import { createPostgresPool, query } from '../../server/storage/postgres/pool.js';
import { type OwnPostgres, startOwnPostgres } from '../helpers/own-postgres.js';
import { postgresAvailable } from '../helpers/postgres.js';

let own: OwnPostgres | undefined;
beforeAll(async () => {
  if (await postgresAvailable()) {
    own = await startOwnPostgres();
  }
}, 120_000);
afterAll(async () => {
  await own?.destroy();
});

describe('PostgreSQL unreachable', () => {
  it('answers 503 database_unavailable for a server that is not there', async () => {
    const pool = createPostgresPool('postgres://postgres@127.0.0.1:1/postgres');
    const failure = await query(pool, 'SELECT 1').catch((error: unknown) => error);
    await pool.end();
    expect(failure).toBeInstanceOf(DatabaseUnavailableError);
    expect(failure).toMatchObject({ status: 503, code: 'database_unavailable', type: 'service_unavailable_error' });
  });

  it('rejects every store call with DatabaseUnavailableError while it is down, and recovers by itself', async (context) => {
    if (!own) {
      context.skip('no PostgreSQL server');
      return;
    }
    const directory = mkdtempSync(path.join(tmpdir(), 'omnigate-pg-down-'));
    const stores = await openPostgresStores({ url: own.url, pepper: randomBytes(32), blobs: directory });
    try {
      const heard: KeyChange[] = [];
      stores.keyChanges.subscribe((change) => heard.push(change));
      const { key } = await stores.keys.create({ name: 'before' });
      await own.stop();
      const calls: Array<[string, () => Promise<unknown>]> = [
        ['verify', () => stores.keys.verify(key)],
        ['usage', () => stores.usage.list({ keyId: 'k', limit: 1, order: 'asc' })],
        ['responses', () => stores.responses.get('resp_1', 'k')],
        ['files', () => stores.files.holdings('k', 1)],
        ['passages', () => stores.passages.search({ keyId: 'k', match: '"x"', limit: 1 })],
        ['videos', () => stores.videoTasks.claim('r', 1, 1_000)],
        ['blobs', () => stores.blobs.get('img_0123456789abcdef')],
      ];
      for (const [name, call] of calls) {
        const failure = await call().then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(failure, name).toBeInstanceOf(DatabaseUnavailableError);
      }
      await own.start();
      let verified: unknown;
      for (let attempt = 0; attempt < 100 && !verified; attempt++) {
        verified = await stores.keys.verify(key).catch(() => undefined);
        if (!verified) {
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
      expect(verified).toBeDefined();
      expect(await stores.usage.list({ keyId: 'k', limit: 1, order: 'asc' })).toEqual({ records: [], hasMore: false });
      // The key change feed reconnected too, and said it may have missed changes.
      await expect.poll(() => heard.some((change) => change.kind === 'unknown'), { timeout: 15_000 }).toBe(true);
    } finally {
      await stores.close();
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
