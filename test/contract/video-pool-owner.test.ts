/**
 * A video task renders in the media pool under the key that created it: while that key already holds its one
 * place in the pool, the task's attempt is refused with key_jobs_limit and retried by the task queue, and it
 * completes once the key's place is free.
 */
import request from 'supertest';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createTestApp } from '../helpers/create-test-app.js';
import { finishedVideo } from '../helpers/finished-video.js';

const made = await createTestApp({ media: { workers: 2, queueLimit: 4, perKeyLimit: 1, jobTimeoutMs: 60_000 } });

afterAll(async () => {
  await made.videoRunner.stop(0);
  await made.registry.close();
});

describe('a video task in the media pool', () => {
  it('counts against the key that created it', async () => {
    let release = () => {};
    const held = made.mediaPool.use(
      new AbortController().signal,
      () => new Promise<void>((resolve) => (release = resolve)),
      {
        owner: (await made.keys.verify(made.key))!.id,
      },
    );
    const res = await request(made.app)
      .post('/v1/videos')
      .set('authorization', `Bearer ${made.key}`)
      .send({ model: 'local:video', prompt: 'rain on a pond', seconds: '4', size: '64x64' });
    expect(res.status).toBe(202);
    await vi.waitFor(
      () =>
        expect(made.logs.find((line) => line.msg === 'video attempt failed; retrying')?.err).toMatchObject({
          code: 'key_jobs_limit',
        }),
      { timeout: 20_000 },
    );
    release();
    await held;
    expect(await finishedVideo(made.app, made.key, res.body.id)).toMatchObject({ status: 'completed', error: null });
  });
});
