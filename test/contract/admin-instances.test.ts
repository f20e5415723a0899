/**
 * A limit set over the admin API on one instance holds on the other, with no restart: two server processes on
 * one database (one SQLite file; one PostgreSQL database), counters in each process. The other instance learns
 * of the change through the key change feed (SQLite's change counter, PostgreSQL's NOTIFY), not by reading the
 * database per request: before the change it admits, after it refuses.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Instance, startInstances } from '../helpers/instances.js';
import { createTestDatabase, postgresAvailable } from '../helpers/postgres.js';
import { dataDir, killServers } from '../helpers/spawn-server.js';

const ADMIN = 'admin-instances-test-key-0123456789abcdef';
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  killServers();
  for (const cleanup of cleanups.splice(0)) {
    await cleanup();
  }
});

let pgUp = false;
beforeAll(async () => {
  pgUp = await postgresAvailable();
});

/** Polls `check` until it holds (the feed's notice takes up to ~1 s); false after 15 s. */
async function eventually(check: () => Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (await check()) {
      return true;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return false;
}

async function limitsCross([a, b]: Instance[]): Promise<void> {
  const admin = (method: string, path: string, body?: unknown) => a.call(method, path, { key: ADMIN, body });
  expect((await admin('POST', '/admin/v1/projects', { name: 'shared', limits: { rpm: 1000 } })).status).toBe(201);
  const created = await admin('POST', '/admin/v1/keys', { name: 'roaming', project: 'shared' });
  expect(created.status).toBe(201);
  const { key, id } = created.json as { key: string; id: string };
  // B holds the key (and the project's generous limit) before the change.
  expect((await b.call('GET', '/v1/models', { key })).status).toBe(200);

  // A project's limit tightened on A: B refuses once it heard (its own counter already holds one call).
  expect((await admin('PATCH', '/admin/v1/projects/shared', { limits: { rpm: 1 } })).status).toBe(200);
  expect(await eventually(async () => (await b.call('GET', '/v1/models', { key })).status === 429)).toBe(true);
  const refused = await b.call('GET', '/v1/models', { key });
  expect((refused.json as { error: { message: string } }).error.message).toContain('project');

  // Out of the project, with a key limit of its own set on A: B applies the key's limit instead.
  expect((await admin('PATCH', `/admin/v1/keys/${id}`, { project: null, limits: { rpm: 1000 } })).status).toBe(200);
  expect(await eventually(async () => (await b.call('GET', '/v1/models', { key })).status === 200)).toBe(true);

  // Revoked on A: refused on B.
  expect((await admin('DELETE', `/admin/v1/keys/${id}`)).status).toBe(200);
  expect(await eventually(async () => (await b.call('GET', '/v1/models', { key })).status === 401)).toBe(true);
}

describe('admin changes across instances', () => {
  it('on one SQLite file: a project limit and a key change made on A hold on B', { timeout: 180_000 }, async () => {
    const instances = await startInstances({ sharedDataDir: dataDir(), shared: { OMNIGATE_ADMIN_KEY: ADMIN } });
    await limitsCross(instances);
  });

  it('on one PostgreSQL database: the same', { timeout: 180_000 }, async (context) => {
    if (!pgUp) {
      context.skip('no PostgreSQL server');
    }
    const database = await createTestDatabase();
    cleanups.push(() => database.drop());
    const instances = await startInstances({
      sharedDataDir: dataDir(),
      shared: { OMNIGATE_ADMIN_KEY: ADMIN, OMNIGATE_DATABASE_URL: database.url },
    });
    await limitsCross(instances);
  });
});
