import { describe, expect, it } from 'vitest';
import { openDatabase } from './database.js';
import { createUsageStore, type UsageEntry } from './usage-store.js';
import { createSqliteUsageRetention, startUsagePurge } from './usage-retention.js';

const entry = (createdAt: number, requestId: string): UsageEntry => ({
  requestId,
  keyId: 'key_a',
  operation: 'chat.completions',
  modelRequested: null,
  model: 'local:chat',
  provider: 'local',
  inputTokens: 1,
  outputTokens: 1,
  cachedInputTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
  units: null,
  media: null,
  status: 200,
  latencyMs: 1,
  createdAt,
});

describe('usage retention on SQLite', () => {
  it('deletes the rows older than the cut in batches and keeps the rest', async () => {
    const db = openDatabase(':memory:');
    const usage = createUsageStore(db);
    await usage.insertMany(
      Array.from({ length: 2_345 }, (_, index) => entry(index < 2_000 ? 100 : 200, `req_${index}`)),
    );
    const retention = createSqliteUsageRetention(db, 300);
    expect(await retention.purgeOlderThan(150)).toBe(2_000);
    const left = (await usage.list({ keyId: 'key_a', limit: 1_000, order: 'asc' })).records;
    expect(left).toHaveLength(345);
    expect(left.every((record) => record.createdAt === 200)).toBe(true);
    expect(await retention.purgeOlderThan(150)).toBe(0);
  });

  it('purges at start with the retention in days', async () => {
    const db = openDatabase(':memory:');
    const usage = createUsageStore(db);
    const day = 86_400;
    await usage.insertMany([entry(10 * day - 1, 'old'), entry(10 * day + 1, 'new')]);
    const purged: number[] = [];
    const stop = startUsagePurge(createSqliteUsageRetention(db), {
      retentionDays: 5,
      now: () => 15 * day,
      onPurge: (count) => purged.push(count),
    });
    await new Promise((resolve) => setImmediate(resolve));
    stop();
    expect(purged).toEqual([1]);
    expect(
      (await usage.list({ keyId: 'key_a', limit: 5, order: 'asc' })).records.map((record) => record.requestId),
    ).toEqual(['new']);
  });
});
