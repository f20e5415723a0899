/**
 * The usage recorder when the database takes no writes: records stay queued up to the bound and are written,
 * in order and complete, once it recovers; beyond the bound new records are dropped, counted exactly, with one
 * error line per outage. The store is the real SQLite usage store behind a switch that makes its inserts fail
 * (the failure mode is the point: an unreachable database), so what is finally written is read back from SQLite.
 */
import { describe, expect, it, vi } from 'vitest';
import { openDatabase } from '../storage/database.js';
import { createUsageStore, type UsageEntry, type UsageStore } from '../storage/usage-store.js';
import { createUsageRecorder } from './usage-recorder.js';

function entry(n: number): UsageEntry {
  return {
    requestId: `req_${String(n).padStart(6, '0')}`,
    keyId: 'key_a',
    operation: 'createChatCompletion',
    modelRequested: 'local:chat',
    model: 'local:chat',
    provider: 'local',
    inputTokens: n,
    outputTokens: 1,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    units: null,
    media: null,
    status: 200,
    latencyMs: 1,
    createdAt: 1_800_000_000,
  };
}

/** The real store, with inserts that fail while `down` is set; counts the insert calls and their sizes. */
function flakyStore() {
  const real = createUsageStore(openDatabase(':memory:'));
  const state = { down: false, inserts: [] as number[] };
  const store: UsageStore = {
    ...real,
    async insertMany(entries) {
      if (state.down) {
        throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
      }
      state.inserts.push(entries.length);
      await real.insertMany(entries);
    },
  };
  const written = async () =>
    (await real.list({ keyId: 'key_a', limit: 1_000_000, order: 'asc' })).records.map((record) => record.requestId);
  return { store, state, written };
}

function capturingLogger() {
  const lines: Array<{ level: 'error' | 'info'; message: string; fields: Record<string, unknown> }> = [];
  return {
    lines,
    logger: {
      error: (fields: Record<string, unknown>, message: string) => lines.push({ level: 'error', message, fields }),
      info: (fields: Record<string, unknown>, message: string) => lines.push({ level: 'info', message, fields }),
    } as never,
  };
}

describe('usage recorder', () => {
  it('writes a queue in multi-row batches of at most maxBatch, in order', async () => {
    const { store, state, written } = flakyStore();
    const recorder = createUsageRecorder(store, { flushIntervalMs: 5, maxBatch: 100 });
    for (let n = 0; n < 250; n++) {
      recorder.record(entry(n));
    }
    await recorder.close();
    expect(state.inserts).toEqual([100, 100, 50]);
    expect(await written()).toEqual(Array.from({ length: 250 }, (_, n) => entry(n).requestId));
  });

  it('below the bound, loses nothing while the database is down, retries with backoff, and writes all once it is back', async () => {
    const { store, state, written } = flakyStore();
    const { lines, logger } = capturingLogger();
    const recorder = createUsageRecorder(store, {
      flushIntervalMs: 5,
      maxBatch: 50,
      maxBuffered: 1_000,
      maxRetryMs: 40,
      logger,
    });
    state.down = true;
    for (let n = 0; n < 600; n++) {
      recorder.record(entry(n));
    }
    await vi.waitFor(() => expect(recorder.stats().failedWrites).toBeGreaterThanOrEqual(3));
    expect(recorder.stats()).toMatchObject({ depth: 600, dropped: 0 });
    // One error line for the outage, however many writes failed.
    expect(lines.filter((line) => line.level === 'error')).toHaveLength(1);
    state.down = false;
    await vi.waitFor(() => expect(recorder.stats().depth).toBe(0));
    expect(await written()).toEqual(Array.from({ length: 600 }, (_, n) => entry(n).requestId));
    expect(recorder.stats().dropped).toBe(0);
    expect(lines.at(-1)).toMatchObject({ level: 'info', message: 'usage records are written again' });
    await recorder.close();
  });

  it('beyond the bound, keeps the oldest, drops and counts exactly the newer ones, and logs once per outage', async () => {
    const { store, state, written } = flakyStore();
    const { lines, logger } = capturingLogger();
    const recorder = createUsageRecorder(store, {
      flushIntervalMs: 5,
      maxBatch: 50,
      maxBuffered: 300,
      maxRetryMs: 40,
      logger,
    });
    state.down = true;
    for (let n = 0; n < 1_000; n++) {
      recorder.record(entry(n));
    }
    expect(recorder.stats()).toMatchObject({ depth: 300, dropped: 700 });
    const errors = lines.filter((line) => line.level === 'error');
    expect(errors.map((line) => line.message)).toEqual([
      'usage record buffer is full (OMNIGATE_USAGE_BUFFER_MAX): new usage records are dropped until writes succeed',
    ]);
    state.down = false;
    await vi.waitFor(() => expect(recorder.stats().depth).toBe(0));
    expect(await written()).toEqual(Array.from({ length: 300 }, (_, n) => entry(n).requestId));
    expect(lines.at(-1)).toMatchObject({ level: 'info', fields: { dropped: 700 } });

    // A second outage is a new episode: one more error line, and the count goes on from 700.
    state.down = true;
    for (let n = 1_000; n < 1_400; n++) {
      recorder.record(entry(n));
    }
    expect(recorder.stats()).toMatchObject({ depth: 300, dropped: 800 });
    await vi.waitFor(() => expect(lines.filter((line) => line.level === 'error')).toHaveLength(3)); // + the write failure
    state.down = false;
    await recorder.close();
    expect((await written()).length).toBe(600);
    expect(recorder.stats()).toMatchObject({ depth: 0, dropped: 800 });
  });

  it('never blocks the event loop on a long queue: timers run between its batches', async () => {
    const { store, state } = flakyStore();
    const recorder = createUsageRecorder(store, { flushIntervalMs: 5, maxBatch: 100 });
    state.down = true;
    for (let n = 0; n < 5_000; n++) {
      recorder.record(entry(n));
    }
    state.down = false;
    // A chain of immediates runs only when the loop turns: a flush that held the loop would let it run once.
    let turns = 0;
    let flushing = true;
    const spin = () => {
      turns++;
      if (flushing) {
        setImmediate(spin);
      }
    };
    setImmediate(spin);
    const batchesBefore = state.inserts.length;
    await recorder.flush();
    flushing = false;
    expect(state.inserts.length - batchesBefore).toBe(50);
    expect(turns).toBeGreaterThanOrEqual(40);
  });

  it('amends a record still queued where it waits, and one written in the database (with its deployment)', async () => {
    const { store, state } = flakyStore();
    const recorder = createUsageRecorder(store, { flushIntervalMs: 5 });
    recorder.record(entry(1));
    await recorder.flush();
    state.down = true;
    recorder.record(entry(2));
    await recorder.amend(entry(1).requestId, { units: 4, media: { seconds: 4 } });
    const placed = { deployment: 'west:sora-2', provider: 'west', attempts: 2 };
    await recorder.amend(entry(2).requestId, { units: 8, media: { seconds: 8 }, placed });
    state.down = false;
    const { records } = await recorder.list({ keyId: 'key_a', limit: 10, order: 'asc' });
    expect(records.map((record) => [record.requestId, record.units])).toEqual([
      [entry(1).requestId, 4],
      [entry(2).requestId, 8],
    ]);
    expect(records[0]).toMatchObject({ deployment: null, attempts: null });
    expect(records[1]).toMatchObject({ deployment: 'west:sora-2', provider: 'west', attempts: 2 });
    await recorder.close();
  });

  it('close() gives up after its timeout when the database stays down, counting what is lost as dropped', async () => {
    const { store, state } = flakyStore();
    const { lines, logger } = capturingLogger();
    const recorder = createUsageRecorder(store, { flushIntervalMs: 5, closeTimeoutMs: 50, logger });
    state.down = true;
    for (let n = 0; n < 10; n++) {
      recorder.record(entry(n));
    }
    await recorder.close();
    expect(recorder.stats()).toMatchObject({ depth: 0, dropped: 10 });
    expect(lines.at(-1)).toMatchObject({ level: 'error', fields: { lost: 10 } });
  });

  it('close() waits for an expected record (a stream cut by the shutdown, still counting) and writes it', async () => {
    const { store, written } = flakyStore();
    const recorder = createUsageRecorder(store, { flushIntervalMs: 60_000, closeTimeoutMs: 10_000 });
    const came = recorder.expect();
    // The record comes only after close() has started, as a cut stream's does once its tokens are counted.
    const closing = recorder.close();
    await new Promise((resolve) => setTimeout(resolve, 20));
    recorder.record(entry(1));
    came();
    came(); // said twice: counted once
    await closing;
    expect(await written()).toEqual(['req_000001']);
  });

  it('close() stops waiting for an expected record that never comes after its timeout, and says so', async () => {
    const { store } = flakyStore();
    const { lines, logger } = capturingLogger();
    const recorder = createUsageRecorder(store, { flushIntervalMs: 60_000, closeTimeoutMs: 30, logger });
    recorder.expect();
    await recorder.close();
    expect(lines).toContainEqual(expect.objectContaining({ level: 'error', fields: { expected: 1 } }));
  });
});
