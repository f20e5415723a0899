import { describe, expect, it } from 'vitest';
import { openDatabase } from './database.js';
import { createVideoTaskStore, type NewVideoTask } from './video-task-store.js';

const task = (keyId = 'key_a', prompt = 'a boat'): NewVideoTask => ({ keyId, requestId: `req_${prompt}`, model: 'local:video', prompt, seconds: 4, width: 320, height: 240, inputBlob: null });

describe('video task store', () => {
  it('claims the oldest due task once, and nobody else while the lease holds', () => {
    const store = createVideoTaskStore(openDatabase(':memory:'));
    const first = store.create(task('key_a', 'first'), 1_000);
    store.create(task('key_a', 'second'), 2_000);
    const claimed = store.claim('runner-1', 5_000, 10_000);
    expect(claimed).toMatchObject({ id: first.id, status: 'processing', claimedBy: 'runner-1', leaseUntil: 15_000, attempts: 1 });
    expect(store.claim('runner-2', 5_000, 10_000)?.prompt).toBe('second');
    expect(store.claim('runner-3', 5_000, 10_000)).toBeUndefined();
  });

  it('hands a task whose runner died to another once the lease has run out, and the dead runner can no longer touch it', () => {
    const store = createVideoTaskStore(openDatabase(':memory:'));
    const created = store.create(task(), 0);
    store.claim('dead', 0, 1_000);
    expect(store.claim('alive', 999, 1_000)).toBeUndefined();
    const taken = store.claim('alive', 1_001, 1_000);
    expect(taken).toMatchObject({ id: created.id, claimedBy: 'alive', attempts: 2 });
    expect(store.renew(created.id, 'dead', 1_002, 1_000)).toBe(false);
    expect(store.complete(created.id, 'dead', { videoBlob: 'b', thumbnailBlob: null, now: 2, expiresAt: 3 })).toBe(false);
    expect(store.renew(created.id, 'alive', 1_002, 1_000)).toBe(true);
    expect(store.complete(created.id, 'alive', { videoBlob: 'video_x', thumbnailBlob: 'video_y', now: 2, expiresAt: 3 })).toBe(true);
    expect(store.get(created.id, 'key_a')).toMatchObject({ status: 'completed', progress: 100, videoBlob: 'video_x', claimedBy: null, expiresAt: 3 });
  });

  it('keeps progress monotonic below 100 until completion, and the checkpoint', () => {
    const store = createVideoTaskStore(openDatabase(':memory:'));
    const created = store.create(task(), 0);
    store.claim('r', 0, 1_000);
    store.setProgress(created.id, 'r', 40);
    store.setProgress(created.id, 'r', 30);
    store.setProgress(created.id, 'r', 100);
    store.setCheckpoint(created.id, 'r', 'upstream-job-7');
    expect(store.get(created.id, 'key_a')).toMatchObject({ progress: 99, checkpoint: 'upstream-job-7' });
  });

  it('puts a released task back after its backoff, refunding the attempt on shutdown', () => {
    const store = createVideoTaskStore(openDatabase(':memory:'));
    const created = store.create(task(), 0);
    store.claim('r', 0, 1_000);
    expect(store.release(created.id, 'r', 5_000)).toBe(true);
    expect(store.claim('r', 4_999, 1_000)).toBeUndefined();
    expect(store.claim('r', 5_000, 1_000)?.attempts).toBe(2);
    store.release(created.id, 'r', 5_000, { refundAttempt: true });
    expect(store.get(created.id, 'key_a')).toMatchObject({ status: 'queued', attempts: 1, claimedBy: null });
    store.claim('r', 6_000, 1_000);
    store.fail(created.id, 'r', { code: 'upstream_error', message: 'gone', now: 7 });
    expect(store.get(created.id, 'key_a')).toMatchObject({ status: 'failed', errorCode: 'upstream_error', completedAt: 7 });
    expect(store.claim('r', 99_999, 1_000)).toBeUndefined();
  });

  it('lists only the key’s own tasks, paged both ways, and another key reads them as unknown', () => {
    const store = createVideoTaskStore(openDatabase(':memory:'));
    const mine = [1, 2, 3, 4, 5].map((n) => store.create(task('key_a', `p${n}`), n));
    const theirs = store.create(task('key_b', 'theirs'), 9);
    const first = store.list({ keyId: 'key_a', limit: 2, order: 'desc' });
    expect(first.tasks.map((t) => t.prompt)).toEqual(['p5', 'p4']);
    expect(first.hasMore).toBe(true);
    const next = store.list({ keyId: 'key_a', limit: 10, order: 'desc', after: first.tasks[1].id });
    expect(next.tasks.map((t) => t.prompt)).toEqual(['p3', 'p2', 'p1']);
    expect(next.hasMore).toBe(false);
    expect(store.list({ keyId: 'key_a', limit: 2, order: 'asc', after: mine[0].id }).tasks.map((t) => t.prompt)).toEqual(['p2', 'p3']);
    expect(store.list({ keyId: 'key_a', limit: 2, order: 'asc', after: theirs.id }).tasks).toEqual([]);
    expect(store.get(theirs.id, 'key_a')).toBeUndefined();
  });
});
