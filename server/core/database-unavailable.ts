/**
 * The shared database (PostgreSQL) cannot be reached: a 503 the caller may retry, not a 500. The stores throw
 * it for connection failures only; a statement the database refuses stays an internal error.
 */
import { ApiError } from './api-error.js';

export const DATABASE_UNAVAILABLE = 'database_unavailable';

export class DatabaseUnavailableError extends ApiError {
  constructor(cause: Error) {
    super(503, 'The database is unavailable; retry shortly.', {
      code: DATABASE_UNAVAILABLE,
      headers: { 'retry-after': '1' },
      cause,
      expected: true,
    });
    this.name = 'DatabaseUnavailableError';
  }
}
