/** The retention purge on a real SQLite file: old stored responses (and their items) go, recent ones stay. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openDatabase, type SqliteDatabase } from './database.js';
import { startResponsePurge } from './response-retention.js';
import { createResponseStore } from './response-store.js';

const DAY = 86_400;
const NOW = 1_800_000_000;
let db: SqliteDatabase;

afterEach(() => db?.close());

async function seed(ages: Record<string, number>) {
  db = openDatabase(path.join(mkdtempSync(path.join(tmpdir(), 'omnigate-retention-')), 'omnigate.sqlite'));
  const store = createResponseStore(db);
  for (const [id, ageSeconds] of Object.entries(ages)) {
    await store.save({
      id,
      keyId: 'key_a',
      createdAt: NOW - ageSeconds,
      response: {
        id,
        object: 'response',
        output: [{ id: `msg_${id}`, type: 'message', role: 'assistant', status: 'completed', content: [] }],
      } as never,
      conversation: [{ role: 'user', content: [{ type: 'text', text: `prompt of ${id}` }] }],
    });
  }
  return store;
}

const ids = () => db.prepare('SELECT id FROM responses ORDER BY id').pluck().all() as string[];
const itemIds = () => db.prepare('SELECT item_id FROM response_items ORDER BY item_id').pluck().all() as string[];

describe('startResponsePurge', () => {
  it('deletes at once the responses older than the retention, with their items, and keeps the recent ones', async () => {
    const store = await seed({ resp_old: 31 * DAY, resp_edge: 30 * DAY - 1, resp_new: 60 });
    const purged: number[] = [];
    const stop = startResponsePurge(store, {
      retentionDays: 30,
      now: () => NOW,
      onPurge: (count) => purged.push(count),
    });
    stop();
    expect(ids()).toEqual(['resp_edge', 'resp_new']);
    expect(itemIds()).toEqual(['msg_resp_edge', 'msg_resp_new']);
    await vi.waitFor(() => expect(purged).toEqual([1]));
    expect((await store.get('resp_new', 'key_a'))?.conversation[0]).toMatchObject({ role: 'user' });
  });

  it('purges again on its interval as responses age, until stopped', async () => {
    let now = NOW;
    const store = await seed({ resp_a: 2 * DAY - 5, resp_b: 60 });
    const stop = startResponsePurge(store, { retentionDays: 2, now: () => now, intervalMs: 20 });
    expect(ids()).toEqual(['resp_a', 'resp_b']);
    now += 10;
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(ids()).toEqual(['resp_b']);
    stop();
    now += 3 * DAY;
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(ids()).toEqual(['resp_b']);
  });
});
