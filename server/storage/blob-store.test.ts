import { mkdtempSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { text } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import { createBlobStore, SWEEP_GRACE_MS } from './blob-store.js';
import { startBlobPurge } from './blob-expiry.js';
import { openDatabase } from './database.js';

function fresh() {
  const dir = mkdtempSync(path.join(tmpdir(), 'omnigate-blobs-'));
  const db = openDatabase(':memory:');
  return { dir, db, store: createBlobStore(db, dir) };
}

describe('blob store', () => {
  it('stores bytes in a private file and reads them back with their metadata', async () => {
    const { dir, store } = fresh();
    const meta = await store.put(new TextEncoder().encode('png bytes'), {
      prefix: 'media',
      mediaType: 'image/png',
      expiresAt: 2_000_000_000,
    });
    expect(meta.id).toMatch(/^media_[0-9A-Za-z]{26}$/);
    expect(await store.get(meta.id)).toMatchObject({ mediaType: 'image/png', size: 9, expiresAt: 2_000_000_000 });
    expect(await text((await store.open(meta.id))!)).toBe('png bytes');
    expect(statSync(path.join(dir, meta.id)).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual([meta.id]);
  });

  it('answers nothing for unknown or path-like ids', async () => {
    const { store } = fresh();
    expect(await store.get('media_unknown123')).toBeUndefined();
    expect(await store.get('../omnigate.sqlite')).toBeUndefined();
    expect(await store.open('../../etc/passwd')).toBeUndefined();
  });

  it('purges expired blobs, file and row, and keeps the others', async () => {
    const { dir, store } = fresh();
    const old = await store.put(new Uint8Array([1]), { prefix: 'media', mediaType: 'audio/mpeg', expiresAt: 100 });
    const live = await store.put(new Uint8Array([2]), { prefix: 'media', mediaType: 'audio/mpeg', expiresAt: 300 });
    const forever = await store.put(new Uint8Array([3]), { prefix: 'file', mediaType: 'text/plain', expiresAt: null });
    expect(await store.purge(200)).toBe(1);
    expect(await store.get(old.id)).toBeUndefined();
    expect(readdirSync(dir).sort()).toEqual([forever.id, live.id].sort());
    const counts: number[] = [];
    const stop = startBlobPurge(store, { now: () => 10_000, onPurge: (count) => counts.push(count) });
    // Waits for the first purge however loaded the machine is (a fixed 50 ms failed under load).
    for (let waited = 0; counts.length === 0 && waited < 10_000; waited += 20) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    stop();
    expect(counts).toEqual([1]);
    expect(readdirSync(dir)).toEqual([forever.id]);
  });

  it('sweeps files a crash left without a row when it opens, once they are older than the grace period', async () => {
    const { dir, db, store } = fresh();
    const kept = await store.put(new Uint8Array([9]), { prefix: 'media', mediaType: 'image/png', expiresAt: null });
    const old = (Date.now() - SWEEP_GRACE_MS - 60_000) / 1000;
    for (const name of [kept.id, 'media_orphan0000000000', '.media_x.partial']) {
      if (name !== kept.id) writeFileSync(path.join(dir, name), 'debris');
      utimesSync(path.join(dir, name), old, old);
    }
    // Another process on the same data directory (a worker) between its bytes and its row, or mid-upload.
    writeFileSync(path.join(dir, 'media_young000000000000'), 'just renamed');
    writeFileSync(path.join(dir, '.media_y.partial'), 'arriving');
    await createBlobStore(db, dir).swept;
    expect(readdirSync(dir).sort()).toEqual(['.media_y.partial', kept.id, 'media_young000000000000'].sort());
    expect(readFileSync(path.join(dir, kept.id))).toEqual(Buffer.from([9]));
  });
});

describe('blobs kept for a key', () => {
  it('sum their live bytes per key, and a put its owner refuses leaves nothing on disk', async () => {
    const { dir, store } = fresh();
    await store.put(new Uint8Array(100), {
      prefix: 'media',
      mediaType: 'image/png',
      expiresAt: 50,
      owner: { keyId: 'key_a' },
    });
    await store.put(new Uint8Array(30), {
      prefix: 'media',
      mediaType: 'image/png',
      expiresAt: null,
      owner: { keyId: 'key_a' },
    });
    await store.put(new Uint8Array(7), {
      prefix: 'media',
      mediaType: 'image/png',
      expiresAt: null,
      owner: { keyId: 'key_b' },
    });
    await store.put(new Uint8Array(1000), { prefix: 'upload', mediaType: 'text/plain', expiresAt: null });
    expect(await store.heldBytes('key_a', 10)).toBe(130);
    expect(await store.heldBytes('key_a', 50)).toBe(30); // expired at 50
    expect(await store.heldBytes('key_b', 10)).toBe(7);
    const before = readdirSync(dir).sort();
    const refused = store.put(new Uint8Array(64), {
      prefix: 'media',
      mediaType: 'image/png',
      expiresAt: null,
      owner: {
        keyId: 'key_b',
        quota: { maxBytes: 70, refuse: (held) => new Error(`no room: ${held} held`) },
      },
    });
    await expect(refused).rejects.toThrow('no room: 7 held');
    expect(readdirSync(dir).sort()).toEqual(before);
    expect(await store.heldBytes('key_b', 10)).toBe(7);
  });

  it('adds the owner column to a table made before it', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'blob-store-test-'));
    const db = openDatabase(':memory:');
    db.exec(
      'CREATE TABLE blobs (id TEXT PRIMARY KEY, media_type TEXT NOT NULL, size INTEGER NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER)',
    );
    const store = createBlobStore(db, dir);
    await store.put(new Uint8Array(5), {
      prefix: 'media',
      mediaType: 'image/png',
      expiresAt: null,
      owner: { keyId: 'key_a' },
    });
    expect(await store.heldBytes('key_a', 0)).toBe(5);
  });
});
