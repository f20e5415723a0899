import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { text } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import { createBlobStore } from './blob-store.js';
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
    const meta = await store.put(new TextEncoder().encode('png bytes'), { prefix: 'media', mediaType: 'image/png', expiresAt: 2_000_000_000 });
    expect(meta.id).toMatch(/^media_[0-9A-Za-z]{26}$/);
    expect(store.get(meta.id)).toMatchObject({ mediaType: 'image/png', size: 9, expiresAt: 2_000_000_000 });
    expect(await text(store.open(meta.id)!)).toBe('png bytes');
    expect(statSync(path.join(dir, meta.id)).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual([meta.id]);
  });

  it('answers nothing for unknown or path-like ids', () => {
    const { store } = fresh();
    expect(store.get('media_unknown123')).toBeUndefined();
    expect(store.get('../omnigate.sqlite')).toBeUndefined();
    expect(store.open('../../etc/passwd')).toBeUndefined();
  });

  it('purges expired blobs, file and row, and keeps the others', async () => {
    const { dir, store } = fresh();
    const old = await store.put(new Uint8Array([1]), { prefix: 'media', mediaType: 'audio/mpeg', expiresAt: 100 });
    const live = await store.put(new Uint8Array([2]), { prefix: 'media', mediaType: 'audio/mpeg', expiresAt: 300 });
    const forever = await store.put(new Uint8Array([3]), { prefix: 'file', mediaType: 'text/plain', expiresAt: null });
    expect(await store.purge(200)).toBe(1);
    expect(store.get(old.id)).toBeUndefined();
    expect(readdirSync(dir).sort()).toEqual([forever.id, live.id].sort());
    const counts: number[] = [];
    const stop = startBlobPurge(store, { now: () => 10_000, onPurge: (count) => counts.push(count) });
    await new Promise((resolve) => setTimeout(resolve, 50));
    stop();
    expect(counts).toEqual([1]);
    expect(readdirSync(dir)).toEqual([forever.id]);
  });

  it('sweeps files a crash left without a row when it opens', async () => {
    const { dir, db, store } = fresh();
    const kept = await store.put(new Uint8Array([9]), { prefix: 'media', mediaType: 'image/png', expiresAt: null });
    writeFileSync(path.join(dir, 'media_orphan0000000000'), 'orphan');
    writeFileSync(path.join(dir, '.media_x.partial'), 'half');
    createBlobStore(db, dir);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(readdirSync(dir)).toEqual([kept.id]);
    expect(readFileSync(path.join(dir, kept.id))).toEqual(Buffer.from([9]));
  });
});
