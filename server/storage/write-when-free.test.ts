/**
 * writeWhenFree: a write that meets the write lock held by another connection waits without sleeping the thread
 * (a timer runs meanwhile, and the other connection, on this same thread, can commit), then writes; it gives up
 * with SQLITE_BUSY once its budget is spent, and leaves the connection's own busy timeout as it was.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { BUSY_TIMEOUT_MS, openDatabase, type SqliteDatabase } from './database.js';
import { writeWhenFree } from './write-when-free.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) {
    cleanup();
  }
});

function twoConnections(): { main: SqliteDatabase; other: Database.Database } {
  const dir = mkdtempSync(path.join(tmpdir(), 'omnigate-write-free-'));
  const main = openDatabase(path.join(dir, 'db.sqlite'));
  main.exec('CREATE TABLE t (v INTEGER)');
  const other = new Database(path.join(dir, 'db.sqlite'));
  cleanups.push(() => {
    other.close();
    main.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { main, other };
}

const count = (db: SqliteDatabase) => db.prepare('SELECT count(*) FROM t').pluck().get();

describe('writeWhenFree', () => {
  it('waits for a lock held by another connection while timers run, then writes', async () => {
    const { main, other } = twoConnections();
    other.exec('BEGIN IMMEDIATE');
    other.prepare('INSERT INTO t VALUES (1)').run();
    let settled = false;
    const writing = writeWhenFree(main, () => main.prepare('INSERT INTO t VALUES (2)').run()).finally(() => {
      settled = true;
    });
    // With the busy handler the call above would have slept the thread until its timeout, then failed: the other
    // connection, on this thread, could never have committed.
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(settled).toBe(false);
    other.exec('COMMIT');
    await writing;
    expect(count(main)).toBe(2);
    expect(main.pragma('busy_timeout', { simple: true })).toBe(BUSY_TIMEOUT_MS);
  });

  it('gives up with SQLITE_BUSY once its budget is spent, and writes nothing', async () => {
    const { main, other } = twoConnections();
    other.exec('BEGIN IMMEDIATE');
    await expect(writeWhenFree(main, () => main.prepare('INSERT INTO t VALUES (2)').run(), 50)).rejects.toMatchObject({
      code: 'SQLITE_BUSY',
    });
    other.exec('ROLLBACK');
    expect(count(main)).toBe(0);
    expect(main.pragma('busy_timeout', { simple: true })).toBe(BUSY_TIMEOUT_MS);
  });

  it('passes any other error on at once', async () => {
    const { main } = twoConnections();
    await expect(writeWhenFree(main, () => main.prepare('INSERT INTO missing VALUES (1)').run())).rejects.toThrow(
      /no such table/,
    );
  });
});
