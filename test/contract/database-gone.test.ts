/**
 * The shared database going away under a running server: calls that need it answer 503 with the documented
 * envelope and `code: database_unavailable` (never a 500), and the server recovers by itself when the database
 * is back. The PostgreSQL here is the test's own (test/helpers/own-postgres.ts), stopped and started at will;
 * the machine's shared server is never touched.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { killServers, startServer, dataDir } from '../helpers/spawn-server.js';
import { startOwnPostgres, type OwnPostgres } from '../helpers/own-postgres.js';
import { postgresAvailable } from '../helpers/postgres.js';

const KEY = 'og-database-gone-test-key-0123456789abcdef';

let own: OwnPostgres | undefined;
beforeAll(async () => {
  if (await postgresAvailable()) {
    own = await startOwnPostgres();
  }
}, 120_000);
afterAll(async () => {
  await own?.destroy();
});
afterEach(() => killServers());

describe('PostgreSQL unreachable', () => {
  it('answers 503 database_unavailable while it is down and recovers by itself', async (context) => {
    if (!own) {
      context.skip('no PostgreSQL binaries or server');
      return;
    }
    const server = await startServer({
      OMNIGATE_DATA_DIR: dataDir(),
      OMNIGATE_DATABASE_URL: own.url,
      OMNIGATE_API_KEYS: KEY,
    });
    const base = `http://127.0.0.1:${server.port}`;
    const usage = (key = KEY) => fetch(`${base}/v1/usage?limit=1`, { headers: { authorization: `Bearer ${key}` } });
    expect((await usage()).status).toBe(200);

    await own.stop();
    const down = await usage();
    const body = (await down.json()) as { error: Record<string, unknown> };
    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).toBe('1');
    expect(down.headers.get('x-svc-request-id')).toBeTruthy();
    expect(body.error).toEqual({
      message: expect.stringContaining('database'),
      type: 'service_unavailable_error',
      param: null,
      code: 'database_unavailable',
    });
    // A key already in the cache authenticates without the database: a call that needs nothing else works.
    const models = await fetch(`${base}/v1/models`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(models.status).toBe(200);
    // A key not in the cache needs the database to be checked: 503 too, not a 401 and not a 500.
    const unknown = await usage('og-a-key-never-seen-before-0123456789abcdef');
    expect(unknown.status).toBe(503);
    expect(server.logs().some((line) => line.level === 50 && /database/.test(String(line.msg)))).toBe(false);

    await own.start();
    let recovered: number | undefined;
    for (let attempt = 0; attempt < 100 && recovered !== 200; attempt++) {
      recovered = (await usage()).status;
      if (recovered !== 200) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    expect(recovered).toBe(200);
  }, 180_000);
});
