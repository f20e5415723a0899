/**
 * A PostgreSQL database of a test's own: `createTestDatabase()` creates `omnigate_test_<random>` on the
 * machine's server (OMNIGATE_TEST_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/postgres) and
 * `drop()` removes it, ending its connections first. `postgresAvailable()` says whether that server answers;
 * under CI=true a missing server fails the run (`requirePostgres` throws) instead of skipping.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const ADMIN_URL = process.env.OMNIGATE_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

async function admin<T>(work: (client: pg.Client) => Promise<T>, url = ADMIN_URL): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

let availability: Promise<boolean> | undefined;

/** Whether the test server answers; under CI=true, a server that does not is an error, not a skip. */
export function postgresAvailable(): Promise<boolean> {
  availability ??= admin(async (client) => {
    await client.query('SELECT 1');
    return true;
  }).catch((error: Error) => {
    if (process.env.CI === 'true') {
      throw new Error(`CI=true and PostgreSQL at ${ADMIN_URL} is not reachable: ${error.message}`);
    }
    console.warn(`SKIPPED: PostgreSQL tests, no server at ${ADMIN_URL} (${error.message})`);
    return false;
  });
  return availability;
}

export async function createTestDatabase(adminUrl = ADMIN_URL): Promise<TestDatabase> {
  const name = `omnigate_test_${randomBytes(6).toString('hex')}`;
  await admin((client) => client.query(`CREATE DATABASE ${name}`), adminUrl);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      await admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`), adminUrl);
    },
  };
}
