/**
 * Two video runners on one SQLite database file (two connections, as two processes would have) while a task is
 * live: the runner that holds it keeps it by renewing its lease, and a runner that lost it to a takeover stops.
 * Each runner has its own injected clock, and every wait is for an event (a renewal, a claim, an abort), never
 * for an amount of time, so a busy machine cannot change the outcome.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../../../test/helpers/child-processes.js';
import type { VideoModel, VideoTaskContext } from '../../core/models.js';
import type { VideoRunnerSettings } from '../../config.js';
import { createLogger } from '../../logger.js';
import type { ModelRegistry } from '../../providers/registry.js';
import { createBlobStore } from '../../storage/blob-store.js';
import { openDatabase } from '../../storage/database.js';
import { createVideoTaskStore, PENDING_INPUT_BLOB, type VideoTaskStore } from '../../storage/video-task-store.js';
import type { UsageRecorder } from '../../usage/usage-recorder.js';
import { startVideoRunner, type VideoRunner } from './video-runner.js';

const LEASE_MS = 300;
const SETTINGS: VideoRunnerSettings = {
  concurrency: 1,
  leaseMs: LEASE_MS,
  pollMs: 3_600_000,
  maxAttempts: 3,
  retentionSeconds: 3600,
  attemptTimeoutMs: 3_600_000,
  maxActivePerKey: 10,
};
const MP4 = new Uint8Array([0, 0, 0, 8, 0x66, 0x74, 0x79, 0x70]);

/** A video model whose every generation waits until the test finishes it, or until its signal fires. */
function heldModel() {
  const calls: Array<{ context: VideoTaskContext; finish(): void }> = [];
  const model = {
    generate(_options, context) {
      return new Promise((resolve, reject) => {
        context.signal.addEventListener('abort', () => reject(context.signal.reason), { once: true });
        calls.push({
          context,
          finish: () => resolve({ video: { data: MP4, mediaType: 'video/mp4' }, usage: { seconds: 1 } }),
        });
      });
    },
  } as VideoModel;
  return { model, calls };
}

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) {
    await cleanup();
  }
});

/** One runner: its own connection to the shared database file, its own clock, and a count of its renewals. */
function runnerOn(file: string, blobDirectory: string, clock: { ms: number }) {
  const db = openDatabase(file);
  const store = createVideoTaskStore(db);
  let renewals = 0;
  const counted: VideoTaskStore = {
    ...store,
    renew(...args) {
      renewals += 1;
      return store.renew(...args);
    },
  };
  const held = heldModel();
  const registry = { resolve: () => ({}), model: () => held.model } as unknown as ModelRegistry;
  const usage = { record() {}, amend() {} } as unknown as UsageRecorder;
  const runner: VideoRunner = startVideoRunner({
    tasks: counted,
    blobs: createBlobStore(db, blobDirectory),
    storage: { maxBytes: Number.MAX_SAFE_INTEGER, held: async () => 0 },
    registry,
    usage,
    logger: createLogger('silent'),
    settings: SETTINGS,
    now: () => clock.ms,
  });
  cleanups.push(async () => {
    await runner.stop(0);
    db.close();
  });
  return { store, runner, calls: held.calls, renewals: () => renewals };
}

function sharedDatabase() {
  const directory = mkdtempSync(path.join(tmpdir(), 'omnigate-video-runner-'));
  cleanups.push(() => rmSync(directory, { recursive: true, force: true }));
  // The blobs in a directory of their own: a blob store sweeps files it does not know from its directory.
  return { file: path.join(directory, 'gateway.db'), blobs: mkdtempSync(path.join(directory, 'blobs-')) };
}

const NEW_TASK = {
  keyId: 'key_a',
  requestId: 'req_1',
  model: 'fake:video',
  prompt: 'a boat',
  seconds: 1,
  width: 64,
  height: 64,
  inputBlob: null,
};

describe('video runner leases, two runners on one database', () => {
  it('keeps a live task by renewing its lease: the other runner never claims it, long after one lease would have run out', async () => {
    const { file, blobs } = sharedDatabase();
    const clock = { ms: 1_000_000 };
    const a = runnerOn(file, blobs, clock);
    const created = await a.store.create(NEW_TASK, clock.ms);
    a.runner.wake();
    expect(await eventually(() => a.calls.length === 1)).toBe(true);
    const b = runnerOn(file, blobs, clock);
    for (let step = 0; step < 6; step += 1) {
      // Two thirds of a lease at a time: four steps without a renewal and the lease would have run out twice.
      clock.ms += (2 * LEASE_MS) / 3;
      const before = a.renewals();
      expect(await eventually(() => a.renewals() > before)).toBe(true);
      b.runner.wake();
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      expect((await b.store.get(created.id, 'key_a'))?.claimedBy).toBe(
        (await a.store.get(created.id, 'key_a'))?.claimedBy,
      );
    }
    expect(b.calls).toHaveLength(0);
    expect(a.calls[0].context.signal.aborted).toBe(false);
    a.calls[0].finish();
    expect(await eventually(async () => (await a.store.get(created.id, 'key_a'))?.status === 'completed')).toBe(true);
    expect(await a.store.get(created.id, 'key_a')).toMatchObject({ attempts: 1, progress: 100 });
  });

  it("notices a takeover: the runner whose lease ran out stops its work, and the new runner's result stands", async () => {
    const { file, blobs } = sharedDatabase();
    // Runner A's clock stands still, so its renewals end its lease at the same time; B's clock moves past it.
    const clockA = { ms: 1_000_000 };
    const clockB = { ms: 1_000_000 };
    const a = runnerOn(file, blobs, clockA);
    const created = await a.store.create(NEW_TASK, clockA.ms);
    a.runner.wake();
    expect(await eventually(() => a.calls.length === 1)).toBe(true);
    // B starts with its clock past A's lease and claims the task at once.
    clockB.ms += 2 * LEASE_MS;
    const b = runnerOn(file, blobs, clockB);
    expect(await eventually(() => b.calls.length === 1)).toBe(true);
    expect(await b.store.get(created.id, 'key_a')).toMatchObject({ status: 'processing', attempts: 2 });

    // A's next renewal finds the task no longer its own and aborts its generation.
    const signalA = a.calls[0].context.signal;
    expect(await eventually(() => signalA.aborted)).toBe(true);
    expect((signalA.reason as Error).message).toBe('the task is no longer ours');

    b.calls[0].finish();
    expect(await eventually(async () => (await b.store.get(created.id, 'key_a'))?.status === 'completed')).toBe(true);
    // A's stopped attempt neither failed the task nor put it back in the queue.
    expect(await a.store.get(created.id, 'key_a')).toMatchObject({ status: 'completed', errorCode: null, attempts: 2 });
    expect(a.calls).toHaveLength(1);
  });
});

describe('a task whose input image is stored after the create was answered', () => {
  it('waits out its grace time unclaimed, then fails input_image_lost if the image never came, without a render', async () => {
    const { file, blobs } = sharedDatabase();
    const clock = { ms: 1_000_000 };
    const a = runnerOn(file, blobs, clock);
    const outcome = await a.store.createWithin({ ...NEW_TASK, inputBlob: PENDING_INPUT_BLOB }, clock.ms, 10, {
      runAfter: clock.ms + 60_000,
    });
    const task = 'task' in outcome ? outcome.task : expect.unreachable();
    a.runner.wake();
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(await a.store.get(task.id, 'key_a')).toMatchObject({ status: 'queued', attempts: 0 });
    clock.ms += 60_000;
    a.runner.wake();
    expect(await eventually(async () => (await a.store.get(task.id, 'key_a'))?.status === 'failed')).toBe(true);
    expect(await a.store.get(task.id, 'key_a')).toMatchObject({ errorCode: 'input_image_lost', attempts: 1 });
    expect(a.calls).toHaveLength(0);
  });

  it('attachInput makes it runnable with its blob; a deleted task takes none', async () => {
    const { file, blobs } = sharedDatabase();
    const clock = { ms: 1_000_000 };
    const a = runnerOn(file, blobs, clock);
    const first = await a.store.createWithin({ ...NEW_TASK, inputBlob: PENDING_INPUT_BLOB }, clock.ms, 10, {
      runAfter: clock.ms + 60_000,
    });
    const task = 'task' in first ? first.task : expect.unreachable();
    expect(await a.store.attachInput(task.id, 'vref_0123456789abcdef', clock.ms)).toBe(true);
    expect(await a.store.attachInput(task.id, 'vref_again0123456789', clock.ms)).toBe(false);
    expect(await a.store.get(task.id, 'key_a')).toMatchObject({
      inputBlob: 'vref_0123456789abcdef',
      runAfter: clock.ms,
    });
    await a.store.delete(task.id, 'key_a');
    expect(await a.store.attachInput(task.id, 'vref_0123456789abcdef', clock.ms)).toBe(false);
  });
});
