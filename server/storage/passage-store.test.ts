import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from './database.js';
import { createPassageStore } from './passage-store.js';

describe('passage store', () => {
  it("finds only the asking key's passages, ranks title matches first, and forgets a removed file", async () => {
    const store = createPassageStore(openDatabase(':memory:'));
    await store.replace(
      { fileId: 'file_a', keyId: 'key_1', title: 'lighthouse.md' },
      ['The keeper climbs the stairs every night.'],
      1,
    );
    await store.replace(
      { fileId: 'file_b', keyId: 'key_1', title: 'notes.txt' },
      ['A lighthouse keeper lived alone.'],
      1,
    );
    await store.replace(
      { fileId: 'file_c', keyId: 'key_2', title: 'lighthouse.txt' },
      ['Another key owns this lighthouse.'],
      1,
    );
    const hits = await store.search({ keyId: 'key_1', match: '"lighthouse"', limit: 10 });
    expect(hits.map((hit) => hit.fileId)).toEqual(['file_a', 'file_b']);
    expect(hits[1]!.snippet).toContain('lighthouse');
    expect(await store.search({ keyId: 'key_2', match: '"keeper"', limit: 10 })).toEqual([]);
    await store.remove('file_b');
    expect(await store.search({ keyId: 'key_1', match: '"alone"', limit: 10 })).toEqual([]);
    expect(await store.count('key_1')).toBe(1);
  });

  it("replaces a file's passages when it is indexed again", async () => {
    const store = createPassageStore(openDatabase(':memory:'));
    await store.replace({ fileId: 'file_a', keyId: 'k', title: 'a.txt' }, ['old words'], 1);
    await store.replace({ fileId: 'file_a', keyId: 'k', title: 'a.txt' }, ['new words', 'more words'], 2);
    expect(await store.search({ keyId: 'k', match: '"old"', limit: 5 })).toEqual([]);
    expect(await store.count('k')).toBe(2);
  });

  it('on a database file, claims passages by id and key alone, as the full claim does', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'omnigate-passages-'));
    const db = openDatabase(path.join(dir, 'db.sqlite'));
    try {
      const store = createPassageStore(db);
      await store.replace({ fileId: 'file_a', keyId: 'key_1', title: 'a.txt' }, ['one', 'two', 'three'], 1);
      const claimed = await store.claimUnembeddedIds!('m1', 2, 1_000, 61_000);
      expect(claimed).toEqual([
        { id: expect.any(Number), keyId: 'key_1' },
        { id: expect.any(Number), keyId: 'key_1' },
      ]);
      // Claimed for real: the full claim skips them while the claim lives, and takes the third.
      const rest = await store.claimUnembedded('m1', 10, 2_000, 62_000);
      expect(rest.map((passage) => passage.text)).toEqual(['three']);
      expect(rest[0]!.id).toBeGreaterThan(claimed[1]!.id);
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
    // In memory no other thread can read the texts: there is no id-only claim.
    expect(createPassageStore(openDatabase(':memory:')).claimUnembeddedIds).toBeUndefined();
  });
});
