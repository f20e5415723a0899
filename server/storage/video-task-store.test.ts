import { describe, expect, it } from 'vitest';
import { openDatabase } from './database.js';
import { createVideoTaskStore, type NewVideoTask } from './video-task-store.js';

const task = (keyId = 'key_a', prompt = 'a boat'): NewVideoTask => ({
  keyId,
  requestId: `req_${prompt}`,
  model: 'local:video',
  prompt,
  seconds: 4,
  width: 320,
  height: 240,
  inputBlob: null,
});

describe('video task store', () => {
  it('claims the oldest due task once, and nobody else while the lease holds', async () => {
    const store = createVideoTaskStore(openDatabase(':memory:'));
    const first = await store.create(task('key_a', 'first'), 1_000);
    await store.create(task('key_a', 'second'), 2_000);
    const claimed = await store.claim('runner-1', 5_000, 10_000);
    expect(claimed).toMatchObject({
      id: first.id,
      status: 'processing',
      claimedBy: 'runner-1',
      leaseUntil: 15_000,
      attempts: 1,
    });
    expect((await store.claim('runner-2', 5_000, 10_000))?.prompt).toBe('second');
    expect(await store.claim('runner-3', 5_000, 10_000)).toBeUndefined();
  });

  it('hands a task whose runner died to another once the lease has run out, and the dead runner can no longer touch it', async () => {
    const store = createVideoTaskStore(openDatabase(':memory:'));
    const created = await store.create(task(), 0);
    await store.claim('dead', 0, 1_000);
    expect(await store.claim('alive', 999, 1_000)).toBeUndefined();
    const taken = await store.claim('alive', 1_001, 1_000);
    expect(taken).toMatchObject({ id: created.id, claimedBy: 'alive', attempts: 2 });
    expect(await store.renew(created.id, 'dead', 1_002, 1_000)).toBe(false);
    expect(
      await store.complete(created.id, 'dead', { videoBlob: 'b', thumbnailBlob: null, now: 2, expiresAt: 3 }),
    ).toBe(false);
    expect(await store.renew(created.id, 'alive', 1_002, 1_000)).toBe(true);
    expect(
      await store.complete(created.id, 'alive', {
        videoBlob: 'video_x',
        thumbnailBlob: 'video_y',
        now: 2,
        expiresAt: 3,
      }),
    ).toBe(true);
    expect(await store.get(created.id, 'key_a')).toMatchObject({
      status: 'completed',
      progress: 100,
      videoBlob: 'video_x',
      claimedBy: null,
      expiresAt: 3,
    });
  });

  it('keeps progress monotonic below 100 until completion, and the checkpoint', async () => {
    const store = createVideoTaskStore(openDatabase(':memory:'));
    const created = await store.create(task(), 0);
    await store.claim('r', 0, 1_000);
    await store.setProgress(created.id, 'r', 40);
    await store.setProgress(created.id, 'r', 30);
    await store.setProgress(created.id, 'r', 100);
    await store.setCheckpoint(created.id, 'r', 'upstream-job-7');
    expect(await store.get(created.id, 'key_a')).toMatchObject({ progress: 99, checkpoint: 'upstream-job-7' });
  });

  it('puts a released task back after its backoff, refunding the attempt on shutdown', async () => {
    const store = createVideoTaskStore(openDatabase(':memory:'));
    const created = await store.create(task(), 0);
    await store.claim('r', 0, 1_000);
    expect(await store.release(created.id, 'r', 5_000)).toBe(true);
    expect(await store.claim('r', 4_999, 1_000)).toBeUndefined();
    expect((await store.claim('r', 5_000, 1_000))?.attempts).toBe(2);
    await store.release(created.id, 'r', 5_000, { refundAttempt: true });
    expect(await store.get(created.id, 'key_a')).toMatchObject({ status: 'queued', attempts: 1, claimedBy: null });
    await store.claim('r', 6_000, 1_000);
    await store.fail(created.id, 'r', { code: 'upstream_error', message: 'gone', now: 7 });
    expect(await store.get(created.id, 'key_a')).toMatchObject({
      status: 'failed',
      errorCode: 'upstream_error',
      completedAt: 7,
    });
    expect(await store.claim('r', 99_999, 1_000)).toBeUndefined();
  });

  it('lists only the key’s own tasks, paged both ways, and another key reads them as unknown', async () => {
    const store = createVideoTaskStore(openDatabase(':memory:'));
    const mine = await Promise.all([1, 2, 3, 4, 5].map((n) => store.create(task('key_a', `p${n}`), n)));
    const theirs = await store.create(task('key_b', 'theirs'), 9);
    const first = await store.list({ keyId: 'key_a', limit: 2, order: 'desc' });
    expect(first.tasks.map((t) => t.prompt)).toEqual(['p5', 'p4']);
    expect(first.hasMore).toBe(true);
    const next = await store.list({ keyId: 'key_a', limit: 10, order: 'desc', after: first.tasks[1].id });
    expect(next.tasks.map((t) => t.prompt)).toEqual(['p3', 'p2', 'p1']);
    expect(next.hasMore).toBe(false);
    expect(
      (await store.list({ keyId: 'key_a', limit: 2, order: 'asc', after: mine[0].id })).tasks.map((t) => t.prompt),
    ).toEqual(['p2', 'p3']);
    expect((await store.list({ keyId: 'key_a', limit: 2, order: 'asc', after: theirs.id })).tasks).toEqual([]);
    expect(await store.get(theirs.id, 'key_a')).toBeUndefined();
  });

  it('refuses a key past its cap of queued and running tasks, counting only its own, and frees room as tasks end', async () => {
    const store = createVideoTaskStore(openDatabase(':memory:'));
    for (let n = 0; n < 3; n++) {
      expect('task' in (await store.createWithin(task('key_a', `a${n}`), n, 3))).toBe(true);
    }
    expect(await store.createWithin(task('key_a', 'a3'), 3, 3)).toEqual({ refused: { active: 3 } });
    expect('task' in (await store.createWithin(task('key_b', 'b0'), 4, 3))).toBe(true);
    const running = (await store.claim('r', 10, 1_000))!;
    expect(await store.activeCount('key_a')).toBe(3); // processing still counts
    await store.complete(running.id, 'r', { videoBlob: 'video_x', thumbnailBlob: null, now: 1, expiresAt: 2 });
    expect(await store.activeCount('key_a')).toBe(2);
    expect('task' in (await store.createWithin(task('key_a', 'a3'), 11, 3))).toBe(true);
  });

  it('claims round-robin across keys: a key with one task waits behind at most one task of a key that queued many', async () => {
    const store = createVideoTaskStore(openDatabase(':memory:'));
    for (let n = 0; n < 50; n++) {
      await store.create(task('key_a', `a${n}`), n);
    }
    const order: string[] = [];
    const finish = (claimed: { id: string }) =>
      store.complete(claimed.id, 'r', { videoBlob: 'video_x', thumbnailBlob: null, now: 1, expiresAt: 2 });
    const first = (await store.claim('r', 100, 1_000))!;
    order.push(first.prompt);
    await store.create(task('key_b', 'b0'), 101);
    await store.create(task('key_c', 'c0'), 102);
    await store.create(task('key_c', 'c1'), 103);
    finish(first);
    for (let n = 0; n < 6; n++) {
      const claimed = (await store.claim('r', 200 + n, 1_000))!;
      order.push(claimed.prompt);
      finish(claimed);
    }
    expect(order).toEqual(['a0', 'b0', 'c0', 'a1', 'c1', 'a2', 'a3']);
  });

  it('with several runners, prefers the key holding fewer of them', async () => {
    const store = createVideoTaskStore(openDatabase(':memory:'));
    await store.create(task('key_a', 'a0'), 0);
    await store.create(task('key_a', 'a1'), 1);
    await store.create(task('key_b', 'b0'), 2);
    await store.create(task('key_b', 'b1'), 3);
    expect((await store.claim('r1', 10, 1_000))?.prompt).toBe('a0');
    expect((await store.claim('r2', 10, 1_000))?.prompt).toBe('b0');
    // key_b's task ends; key_a still holds a runner, so key_b goes next although key_a was served first.
    const b0 = (await store.list({ keyId: 'key_b', limit: 1, order: 'asc' })).tasks[0]!;
    await store.complete(b0.id, 'r2', { videoBlob: 'video_x', thumbnailBlob: null, now: 1, expiresAt: 2 });
    expect((await store.claim('r2', 11, 1_000))?.prompt).toBe('b1');
  });

  it('adds the claim order column to a table made before it', async () => {
    const db = openDatabase(':memory:');
    db.exec(`CREATE TABLE video_tasks (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, key_id TEXT NOT NULL, request_id TEXT NOT NULL,
      model TEXT NOT NULL, prompt TEXT NOT NULL, seconds INTEGER NOT NULL, width INTEGER NOT NULL, height INTEGER NOT NULL, input_blob TEXT,
      status TEXT NOT NULL, progress INTEGER NOT NULL DEFAULT 0, attempts INTEGER NOT NULL DEFAULT 0, run_after INTEGER NOT NULL, claimed_by TEXT,
      lease_until INTEGER, checkpoint TEXT, video_blob TEXT, thumbnail_blob TEXT, error_code TEXT, error_message TEXT, created_at INTEGER NOT NULL,
      completed_at INTEGER, expires_at INTEGER)`);
    db.exec(`INSERT INTO video_tasks (id, key_id, request_id, model, prompt, seconds, width, height, status, run_after, created_at)
      VALUES ('video_old', 'key_a', 'req', 'local:video', 'old', 4, 320, 240, 'queued', 0, 0)`);
    const store = createVideoTaskStore(db);
    expect(await store.claim('r', 1, 1_000)).toMatchObject({ id: 'video_old', claimOrder: 1 });
  });
});
