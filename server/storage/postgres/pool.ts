/**
 * The one PostgreSQL pool of a process (driver `pg`), and how its failures are told apart: a database that
 * cannot be reached is a `DatabaseUnavailableError` (503 `database_unavailable`), not an internal error. The
 * pool recovers by itself: a dead connection is dropped by `pg` and the next query opens a new one.
 *
 * bigint columns (ids, counters, milliseconds since the epoch) come back as numbers rather than `pg`'s default
 * strings; every value the stores keep in them is below 2^53. The parser is this pool's own, not `pg`'s global.
 */
import pg from 'pg';
import { DatabaseUnavailableError } from '../../core/database-unavailable.js';

export type PgPool = pg.Pool;

const INT8_OID = 20;
const NUMERIC_OID = 1700;

const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID || oid === NUMERIC_OID) {
      return (value: string) => Number(value);
    }
    return pg.types.getTypeParser(oid, format);
  },
};

export interface PostgresPoolOptions {
  /** Connections at most (each instance opens its own pool; PostgreSQL's max_connections bounds the sum). */
  max?: number;
  /** Called for errors of idle connections (the server went away); the pool drops the connection itself. */
  onIdleError?(error: Error): void;
}

export function createPostgresPool(url: string, options: PostgresPoolOptions = {}): PgPool {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    // A request waiting on an unreachable database gets its 503 within this, instead of hanging.
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    types,
  });
  // Without a listener an idle connection's error (a restart of PostgreSQL) would crash the process.
  pool.on('error', (error) => options.onIdleError?.(error));
  return pool;
}

/** SQLSTATE classes and codes that mean "the database is not there", not "the statement is wrong". */
const UNAVAILABLE_CODES = new Set([
  '57P01',
  '57P02',
  '57P03',
  '53300',
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
]);

export function isConnectionFailure(error: unknown): boolean {
  if (!(error instanceof Error)) {
    return false;
  }
  const code = (error as { code?: string }).code;
  if (code && (UNAVAILABLE_CODES.has(code) || code.startsWith('08'))) {
    return true;
  }
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended unexpectedly/i.test(
    error.message,
  );
}

/**
 * PostgreSQL text cannot hold NUL, which JSON and multipart input can carry (a prompt, a model name, a file
 * name): bound strings get U+FFFD in its place instead of failing the statement (and, for a usage batch,
 * every retry of it). SQLite keeps the NUL; nothing compares such a value across backends.
 */
function bindable(values: readonly unknown[]): unknown[] {
  return values.map((value) =>
    typeof value === 'string' && value.includes('\u0000') ? value.replaceAll('\u0000', '\uFFFD') : value,
  );
}

/** What a store's statements run on: the pool, or the one connection of a transaction. */
export interface Queryable {
  query<Row extends pg.QueryResultRow = Record<string, unknown>>(
    text: string,
    values?: readonly unknown[],
  ): Promise<pg.QueryResult<Row>>;
}

/** Runs a query; a connection failure becomes DatabaseUnavailableError, anything else is rethrown as it is. */
export async function query<Row extends pg.QueryResultRow = Record<string, unknown>>(
  pool: PgPool | pg.PoolClient,
  text: string,
  values: readonly unknown[] = [],
): Promise<pg.QueryResult<Row>> {
  try {
    return await pool.query<Row>(text, bindable(values));
  } catch (error) {
    throw unavailable(error);
  }
}

export function unavailable(error: unknown): unknown {
  return isConnectionFailure(error) ? new DatabaseUnavailableError(error as Error) : error;
}

/** Runs `work` in one transaction on one connection: committed when it resolves, rolled back when it throws. */
export async function transaction<T>(pool: PgPool, work: (client: Queryable) => Promise<T>): Promise<T> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw unavailable(error);
  }
  let broken = false;
  try {
    await client.query('BEGIN');
    const connection = client;
    const result = await work({
      query: <Row extends pg.QueryResultRow>(text: string, values: readonly unknown[] = []) =>
        connection.query<Row>(text, bindable(values)),
    });
    await client.query('COMMIT');
    return result;
  } catch (error) {
    broken = isConnectionFailure(error);
    if (!broken) {
      await client.query('ROLLBACK').catch(() => {
        broken = true;
      });
    }
    throw unavailable(error);
  } finally {
    // A connection that failed mid-transaction is destroyed rather than handed to the next caller.
    client.release(broken);
  }
}
