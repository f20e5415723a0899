/**
 * Whether the database still works, for the readiness check: the file is still where it was opened (an open
 * SQLite connection goes on reading and writing a deleted file, whose writes are then lost), readable and
 * writable by us, and the connection answers a query (fails once it is closed).
 */
import { accessSync, constants, statSync } from 'node:fs';
import type { SqliteDatabase } from './database.js';

/** null when the database works, else what is wrong. */
export function databaseProblem(db: SqliteDatabase, file: string): string | null {
  if (file !== ':memory:') {
    try {
      const opened = statSync(file);
      if (opened.nlink === 0) {
        return `the database file ${file} was deleted`;
      }
      accessSync(file, constants.R_OK | constants.W_OK);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      return code === 'ENOENT'
        ? `the database file ${file} is gone`
        : `the database file ${file} cannot be read and written (${code ?? 'error'})`;
    }
  }
  try {
    db.prepare('SELECT 1').get();
  } catch (error) {
    return `the database does not answer: ${(error as Error).message}`;
  }
  return null;
}
