import { describe, expect, it } from 'vitest';
import { openDatabase } from './database.js';
import { createFileStore, INDEXING_LEASE_SECONDS, type NewStoredFile } from './file-store.js';

const QUOTA = { maxBytes: 1_000_000, maxCount: 100 };
const file = (indexing?: NewStoredFile['indexing']): NewStoredFile => ({
  keyId: 'key_a',
  blobId: 'blob_1',
  filename: 'a.pdf',
  purpose: 'user_data',
  bytes: 10,
  sha256: '0'.repeat(64),
  mediaType: 'application/pdf',
  createdAt: 1,
  expiresAt: null,
  indexing,
});

describe('file store: indexing state', () => {
  it('keeps the state an upload starts with and the one its indexing ends with, and fails what a previous process left indexing', async () => {
    const store = createFileStore(openDatabase(':memory:'));
    const created = await store.create(file({ status: 'indexing' }), QUOTA, 1);
    if (!('file' in created)) throw new Error('refused');
    expect((await store.get(created.file.id, 'key_a', 1))?.indexing).toEqual({
      status: 'indexing',
      reason: undefined,
      code: undefined,
    });
    const other = await store.create(file({ status: 'indexing' }), QUOTA, 1);
    if (!('file' in other)) throw new Error('refused');
    expect(
      await store.setIndexing(created.file.id, { status: 'failed', code: 'too_many_pages', reason: 'too long' }),
    ).toBe(true);
    expect((await store.get(created.file.id, 'key_a', 1))?.indexing).toEqual({
      status: 'failed',
      code: 'too_many_pages',
      reason: 'too long',
    });
    expect(await store.abandonIndexing({ status: 'failed', code: 'interrupted', reason: 'restarted' }, 1)).toBe(0);
    // Its indexer stopped renewing: once the lease has run out the row is failed.
    expect(
      await store.abandonIndexing(
        { status: 'failed', code: 'interrupted', reason: 'restarted' },
        1 + INDEXING_LEASE_SECONDS + 1,
      ),
    ).toBe(1);
    expect((await store.get(other.file.id, 'key_a', 1))?.indexing).toMatchObject({
      status: 'failed',
      code: 'interrupted',
    });
    expect(await store.setIndexing('file-gone', { status: 'indexed' })).toBe(false);
  });

  it('adds the indexing columns to a table made before them; its rows show no state', async () => {
    const db = openDatabase(':memory:');
    db.exec(`CREATE TABLE files (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, key_id TEXT NOT NULL, blob_id TEXT NOT NULL,
      filename TEXT NOT NULL, purpose TEXT NOT NULL, bytes INTEGER NOT NULL, sha256 TEXT NOT NULL, media_type TEXT NOT NULL,
      created_at INTEGER NOT NULL, expires_at INTEGER);
      INSERT INTO files (id, key_id, blob_id, filename, purpose, bytes, sha256, media_type, created_at) VALUES ('file-old', 'key_a', 'b', 'old.txt', 'user_data', 3, 'x', 'text/plain', 1)`);
    const store = createFileStore(db);
    expect(await store.get('file-old', 'key_a', 1)).toMatchObject({ filename: 'old.txt', indexing: undefined });
    expect(await store.setIndexing('file-old', { status: 'indexed' })).toBe(true);
    expect((await store.get('file-old', 'key_a', 1))?.indexing?.status).toBe('indexed');
  });
});
