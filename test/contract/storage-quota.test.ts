/**
 * One storage quota per key over its uploaded files and the generated media kept for it: images answered by
 * URL fill it until the next is refused with 413 `storage_quota_exceeded` (b64_json, which keeps nothing, is
 * still served), an upload then finds the room the images took, a video is refused at create when the key is
 * full and fails with the same code when its result does not fit, and the room comes back when links expire.
 */
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { expectRequestId } from '../helpers/contract-assertions.js';
import { createTestApp, type TestApp } from '../helpers/create-test-app.js';
import { finishedVideo } from '../helpers/finished-video.js';
import { mcpToolCall } from '../helpers/mcp-tool-call.js';

const QUOTA = 120_000;
const TTL = 3600;
let clock = Date.now();
// One worker and no queue: a generation that reached the engines while a test holds the worker is a 429, so a
// 413 then shows the refusal came before the model ran.
const made: TestApp = await createTestApp({
  files: { quotaBytes: QUOTA },
  mediaLinkTtlSeconds: TTL,
  now: () => clock,
  media: { workers: 1, queueLimit: 0, jobTimeoutMs: 120_000 },
});
const auth = { authorization: `Bearer ${made.key}` };
const keyId = (await made.keys.verify(made.key))!.id;
const held = async () => (await made.files.holdings(keyId, Math.floor(clock / 1000))).bytes;

afterAll(async () => {
  await made.videoRunner.stop(0);
  await made.registry.close();
});

const image = (n: number, format: 'url' | 'b64_json' = 'url') =>
  request(made.app)
    .post('/v1/images/generations')
    .set(auth)
    .send({
      model: 'local:image',
      prompt: `a lighthouse at dusk, number ${n}`,
      size: '256x256',
      response_format: format,
    });

describe('the storage quota counts generated media', () => {
  let refusedAfter = 0;

  it('keeps images by URL until the next would pass the quota, then answers 413 storage_quota_exceeded', async () => {
    let res = await image(0);
    expect(res.status).toBe(200);
    expect(await held()).toBeGreaterThan(0);
    for (let n = 1; n < 100 && res.status === 200; n++) {
      res = await image(n);
      refusedAfter = n;
    }
    expect(res.status).toBe(413);
    expectRequestId(res);
    expect(res.body.error).toMatchObject({ code: 'storage_quota_exceeded' });
    expect(await held()).toBeLessThanOrEqual(QUOTA);
    expect(await held()).toBe(await made.blobs.heldBytes(keyId, Math.floor(clock / 1000)));
    expect((await image(999, 'b64_json')).status).toBe(200);
  });

  it('leaves an upload only the room the images left', async () => {
    const room = QUOTA - (await held());
    const res = await request(made.app)
      .post('/v1/files')
      .set(auth)
      .field('purpose', 'user_data')
      .attach('file', Buffer.alloc(room + 1, 'a'), 'fill.txt');
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('file_quota_bytes_exceeded');
  });

  it('refuses a video at create when the key is full, and frees the room when the media links expire', async () => {
    const fill = await request(made.app)
      .post('/v1/files')
      .set(auth)
      .field('purpose', 'user_data')
      .attach('file', Buffer.alloc(QUOTA - (await held()), 'a'), 'fill.txt');
    expect(fill.status).toBe(200);
    const refused = await request(made.app)
      .post('/v1/videos')
      .set(auth)
      .send({ model: 'local:video', prompt: 'waves', seconds: '4', size: '64x64' });
    expect(refused.status).toBe(413);
    expect(refused.body.error.code).toBe('storage_quota_exceeded');
    let release = () => {};
    const holding = made.mediaPool.use(
      new AbortController().signal,
      () => new Promise<void>((resolve) => (release = resolve)),
    );
    for (const [tool, args] of [
      ['text_to_speech', { input: 'hello' }],
      ['generate_music', { prompt: 'piano', duration: 1 }],
      ['generate_image', { prompt: 'a boat' }],
    ] as const) {
      const result = await mcpToolCall(made.app, made.key, tool, args);
      expect(result.isError, tool).toBe(true);
      expect(result.content[0]?.text, tool).toMatch(/413 storage_quota_exceeded/);
    }
    expect((await image(500)).status).toBe(413);
    release();
    await holding;
    await request(made.app).delete(`/v1/files/${fill.body.id}`).set(auth).expect(200);
    const before = await held();
    clock += (TTL + 1) * 1000;
    expect(await held()).toBeLessThan(before);
    expect(await held()).toBe(0);
    expect((await image(1000)).status).toBe(200);
    expect(refusedAfter).toBeGreaterThan(0);
  });

  it('fails a video whose result does not fit, keeping nothing', async () => {
    const fill = await request(made.app)
      .post('/v1/files')
      .set(auth)
      .field('purpose', 'user_data')
      .attach('file', Buffer.alloc(QUOTA - (await held()) - 100, 'a'), 'fill.txt');
    expect(fill.status).toBe(200);
    const heldBefore = await held();
    const created = await request(made.app)
      .post('/v1/videos')
      .set(auth)
      .send({ model: 'local:video', prompt: 'waves at night', seconds: '4', size: '64x64' });
    expect(created.status).toBe(202);
    const done = await finishedVideo(made.app, made.key, created.body.id);
    expect(done).toMatchObject({ status: 'failed', error: { code: 'storage_quota_exceeded' } });
    expect(await held()).toBe(heldBefore);
  });
});
