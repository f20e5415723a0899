/** Whether the PostgreSQL database answers, for the readiness check: null when it does, else what is wrong. */
import type { PgPool } from './pool.js';

export async function postgresProblem(pool: PgPool): Promise<string | null> {
  try {
    await pool.query('SELECT 1');
    return null;
  } catch (error) {
    return `the PostgreSQL database does not answer: ${(error as Error).message}`;
  }
}
