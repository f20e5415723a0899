/**
 * The key cache on real SQLite files, as the server and the keys CLI use them: a key revoked or created by
 * another connection (the CLI) reaches the server's cache through the change feed within one poll period; a
 * change made through the server's own store at once; a notice that never comes is made up for by the
 * reconcile; and a cached answer is given without the database (it is closed under it).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openDatabase, type SqliteDatabase } from './database.js';
import { createKeyCache, KEY_RECONCILE_MS, type KeyCache } from './key-cache.js';
import { createLocalKeyChangeFeed, type KeyChangeFeed } from './key-change-feed.js';
import { createKeyStore, type KeyStore } from './key-store.js';
import { loadPepper } from './pepper.js';
import { createSqliteKeyChangeFeed, KEY_CHANGES_POLL_MS } from './sqlite-key-change-feed.js';

const cleanup: Array<() => void | Promise<void>> = [];

afterEach(async () => {
  vi.useRealTimers();
  for (const step of cleanup.splice(0).reverse()) {
    await step();
  }
});

function tempDataDir(): string {
  return path.join(mkdtempSync(path.join(tmpdir(), 'omnigate-key-cache-')), 'data');
}

/** A process on the data directory: its own connection, change feed, key store and (for the server) cache. */
function openProcess(dir: string, options: { feed?: 'sqlite' | 'none' } = {}) {
  const db: SqliteDatabase = openDatabase(path.join(dir, 'omnigate.sqlite'));
  const feed: KeyChangeFeed = options.feed === 'none' ? createLocalKeyChangeFeed() : createSqliteKeyChangeFeed(db);
  const keys: KeyStore = createKeyStore(db, { pepper: loadPepper(dir), changes: feed });
  const cache: KeyCache = createKeyCache(keys, feed);
  cleanup.push(async () => {
    cache.close();
    await feed.close();
    if (db.open) {
      db.close();
    }
  });
  return { db, feed, keys, cache };
}

describe('a change made by another process (the keys CLI next to the server)', () => {
  it(`a revocation is refused after one poll of the change counter (${KEY_CHANGES_POLL_MS} ms, within the 1 s bound)`, async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const dir = tempDataDir();
    const server = openProcess(dir);
    const cli = openProcess(dir);
    const { key, record } = await cli.keys.create({ name: 'doomed' });
    expect((await server.cache.verify(key))?.id).toBe(record.id);
    expect(server.cache.cached(key)?.record?.id).toBe(record.id);

    expect(await cli.keys.revoke(record.id)).toBe(true);
    // Nothing has told the server yet: the cached answer stands until its feed polls.
    expect(server.cache.cached(key)?.record?.id).toBe(record.id);
    vi.advanceTimersByTime(KEY_CHANGES_POLL_MS);
    // The poll saw the counter move and started a re-read of the keys, which drops the revoked one.
    await vi.waitFor(() => expect(server.cache.cached(key)?.record).toBeUndefined());
    expect(await server.cache.verify(key)).toBeUndefined();
  });

  it('a key created after it was presented (and held as unknown) works after one poll', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const dir = tempDataDir();
    const server = openProcess(dir);
    const cli = openProcess(dir);
    expect(await server.cache.verify('operator-chosen-key-1234')).toBeUndefined();
    expect(server.cache.cached('operator-chosen-key-1234')).toEqual({ record: undefined });
    await cli.keys.ensure('operator-chosen-key-1234', 'env-1');
    vi.advanceTimersByTime(KEY_CHANGES_POLL_MS);
    expect(server.cache.cached('operator-chosen-key-1234')).toBeUndefined(); // unknown answers dropped at the notice
    expect((await server.cache.verify('operator-chosen-key-1234'))?.name).toBe('env-1');
  });

  it('with real timers, a revocation through a second store is seen without any request asking', async () => {
    const dir = tempDataDir();
    const server = openProcess(dir);
    const cli = openProcess(dir);
    const { key, record } = await cli.keys.create({ name: 'doomed' });
    expect((await server.cache.verify(key))?.id).toBe(record.id);
    await cli.keys.revoke(record.id);
    // Polled, not slept: the feed's own timer does the work (the bound itself is the fake-timer test above).
    await vi.waitFor(() => expect(server.cache.cached(key)?.record).toBeUndefined(), { timeout: 10_000, interval: 20 });
  });

  it('a notice that never comes (no feed between the processes) is made up for by the periodic reconcile', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const dir = tempDataDir();
    const server = openProcess(dir, { feed: 'none' });
    const cli = openProcess(dir, { feed: 'none' });
    const { key, record } = await cli.keys.create({ name: 'doomed' });
    expect((await server.cache.verify(key))?.id).toBe(record.id);
    await cli.keys.revoke(record.id);
    vi.advanceTimersByTime(KEY_RECONCILE_MS - 1);
    expect(server.cache.cached(key)?.record?.id).toBe(record.id);
    vi.advanceTimersByTime(1);
    await vi.waitFor(() => expect(server.cache.cached(key)?.record).toBeUndefined());
  });
});

describe('changes through the same store', () => {
  it('take effect at the very next verification, with no poll', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] }); // no poll can run in this test
    const server = openProcess(tempDataDir());
    const { key, record } = await server.keys.create({ name: 'doomed' });
    const other = await server.keys.create({ name: 'kept' });
    expect((await server.cache.verify(key))?.id).toBe(record.id);
    expect((await server.cache.verify(other.key))?.id).toBe(other.record.id);
    expect(await server.keys.revoke(record.id)).toBe(true);
    expect(server.cache.cached(key)).toBeUndefined();
    expect(await server.cache.verify(key)).toBeUndefined();
    // Only the changed key was dropped.
    expect(server.cache.cached(other.key)?.record?.id).toBe(other.record.id);
    expect(await server.cache.verify('operator-chosen-key-5678')).toBeUndefined();
    await server.keys.ensure('operator-chosen-key-5678', 'env-2');
    expect((await server.cache.verify('operator-chosen-key-5678'))?.name).toBe('env-2');
  });
});

describe('a cached answer', () => {
  it('is given without the database: still answered once the connection is closed, while a new key fails', async () => {
    const { db, feed, keys, cache } = openProcess(tempDataDir());
    const { key, record } = await keys.create({ name: 'hot' });
    expect((await cache.verify(key))?.id).toBe(record.id);
    expect(await cache.verify('og-unknown-key')).toBeUndefined();
    await feed.close();
    db.close();
    // Synchronous and database-free: the closed connection would throw on any statement.
    expect(cache.cached(key)?.record?.id).toBe(record.id);
    expect((await cache.verify(key))?.id).toBe(record.id);
    expect(await cache.verify('og-unknown-key')).toBeUndefined();
    // A key not held must go to the database, which is gone: proof that the answers above did not.
    await expect(cache.verify('og-never-seen-key')).rejects.toThrow(/not open/);
  });

  it('read while a change arrived is not kept (it may predate the change)', async () => {
    const server = openProcess(tempDataDir());
    const { key, record } = await server.keys.create({ name: 'raced' });
    const verifying = server.cache.verify(key);
    await server.feed.publish({ kind: 'revoked', keyId: record.id });
    expect((await verifying)?.id).toBe(record.id); // the answer of its moment
    expect(server.cache.cached(key)).toBeUndefined(); // but not held
  });
});
