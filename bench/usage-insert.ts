/**
 * What one usage record costs to write, with the store and the database settings the gateway uses: batches of
 * 200 rows (200 ms of traffic at 1,000 req/s) into a fresh database, with request ids as the gateway makes them
 * (time-ordered) beside fully random ones, to show what the order buys once the table holds rows.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomId, timeOrderedId } from '../server/core/random-id.js';
import { openDatabase } from '../server/storage/database.js';
import { createUsageStore, type UsageEntry } from '../server/storage/usage-store.js';

export interface UsageInsertResult {
  ids: string;
  rows: number;
  /** CPU µs per row over the last batches (the table already holds the earlier ones). */
  microsPerRow: number;
}

function entry(requestId: string): UsageEntry {
  return {
    requestId,
    keyId: 'key_9e981516cfbf3e9c',
    operation: 'createChatCompletion',
    modelRequested: 'gpt-4o-mini',
    model: 'gpt-4o-mini',
    provider: 'fake',
    inputTokens: 23,
    outputTokens: 41,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    units: null,
    media: null,
    status: 200,
    latencyMs: 1,
    createdAt: Date.now(),
  };
}

async function measure(ids: string, makeId: () => string, batches: number): Promise<UsageInsertResult> {
  const dir = mkdtempSync(path.join(tmpdir(), 'omnigate-usage-bench-'));
  const db = openDatabase(path.join(dir, 'usage.db'));
  try {
    const store = createUsageStore(db);
    let cpu = 0;
    for (let batch = 0; batch < batches; batch++) {
      const rows = Array.from({ length: 200 }, () => entry(makeId()));
      const started = process.cpuUsage();
      await store.insertMany(rows);
      const spent = process.cpuUsage(started);
      // The second half only: by then the table is past the size the first batches start from.
      if (batch >= batches / 2) {
        cpu += spent.user + spent.system;
      }
    }
    return { ids, rows: batches * 200, microsPerRow: Math.round((cpu / ((batches / 2) * 200)) * 100) / 100 };
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchUsageInsert(batches = 400): Promise<UsageInsertResult[]> {
  return [
    await measure('time-ordered (req_ ids as made)', () => timeOrderedId('req'), batches),
    await measure('random (randomId)', () => randomId('req'), batches),
  ];
}
