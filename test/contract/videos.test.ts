/**
 * Video tasks through the HTTP contract with the built-in engine: create (JSON and multipart with an input
 * image) answers 202 with Location and the queued task; bad shapes are refused before queueing; the task goes
 * queued → processing → completed with progress; content is 409 before, then an MP4 with byte ranges and a PNG
 * thumbnail; list pages only the caller's tasks; usage gets the seconds of video on the create call's record.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, constants, mkdtempSync, openSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleImage } from '../fakes/media-samples.js';
import { binary } from '../helpers/binary-body.js';
import { expectRequestId } from '../helpers/contract-assertions.js';
import { createTestApp, type TestApp } from '../helpers/create-test-app.js';
import { DEFAULT_MEDIA_SETTINGS } from '../../server/engines/media-pool.js';
import { readBlob } from '../../server/calls/video/video-runner.js';
import { PENDING_INPUT_BLOB } from '../../server/storage/video-task-store.js';
import { finishedVideo } from '../helpers/finished-video.js';
import { mcpToolCall } from '../helpers/mcp-tool-call.js';
import { mp4Summary } from '../helpers/mp4-boxes.js';
import { pngSize } from '../helpers/probe-media.js';
import { assertMatchesSchema } from '../helpers/spec-schemas.js';

const made: TestApp = await createTestApp();
const auth = { authorization: `Bearer ${made.key}` };

afterAll(async () => {
  await made.videoRunner.stop(0);
  await made.registry.close();
});

const finished = (id: string, seen: number[] = []) =>
  finishedVideo(made.app, made.key, id, { onPoll: (video) => seen.push(video.progress as number) });

describe('POST /v1/videos', () => {
  it('answers 202 with Location and the queued task, then completes it with progress, an MP4 and a thumbnail', async () => {
    const res = await request(made.app)
      .post('/v1/videos')
      .set(auth)
      .send({ model: 'local:video', prompt: 'snow falling on a quiet forest at dusk', seconds: '4', size: '320x240' });
    expect(res.status).toBe(202);
    assertMatchesSchema('Video', res.body);
    expect(res.headers.location).toBe(`/v1/videos/${res.body.id}`);
    expect(res.body).toMatchObject({
      object: 'video',
      model: 'local:video',
      status: 'queued',
      progress: 0,
      seconds: '4',
      size: '320x240',
      error: null,
      completed_at: null,
    });
    const createRequestId = expectRequestId(res);
    const early = await request(made.app).get(`/v1/videos/${res.body.id}/content`).set(auth);
    if (early.status !== 200) {
      expect(early.status).toBe(409);
      expect(early.body.error.code).toBe('video_not_ready');
    }
    const seen: number[] = [];
    const done = await finished(res.body.id, seen);
    expect(done).toMatchObject({ status: 'completed', progress: 100, error: null });
    expect(done.expires_at as number).toBeGreaterThan(done.completed_at as number);
    expect(seen).toEqual([...seen].sort((a, b) => a - b));

    const video = await binary(request(made.app).get(`/v1/videos/${res.body.id}/content`).set(auth));
    expect(video.status).toBe(200);
    expect(video.headers['content-type']).toBe('video/mp4');
    expect(video.headers['accept-ranges']).toBe('bytes');
    const summary = mp4Summary(video.body);
    expect(summary.moovBeforeMdat).toBe(true);
    expect(summary.seconds).toBeCloseTo(4, 0);
    expect(summary.video).toMatchObject({ codec: 'avc1', width: 320, height: 240 });

    const part = await binary(
      request(made.app).get(`/v1/videos/${res.body.id}/content`).set(auth).set('range', 'bytes=0-99'),
    );
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 0-99/${video.body.length}`);
    expect(Buffer.compare(part.body, video.body.subarray(0, 100))).toBe(0);
    const outside = await request(made.app)
      .get(`/v1/videos/${res.body.id}/content`)
      .set(auth)
      .set('range', `bytes=${video.body.length + 10}-`);
    expect(outside.status).toBe(416);
    expect(outside.headers['content-range']).toBe(`bytes */${video.body.length}`);

    const thumbnail = await binary(
      request(made.app).get(`/v1/videos/${res.body.id}/content?variant=thumbnail`).set(auth),
    );
    expect(thumbnail.headers['content-type']).toBe('image/png');
    expect(pngSize(thumbnail.body)).toEqual({ width: 320, height: 240 });

    await made.usage.flush();
    const usage = await request(made.app).get(`/v1/usage?request_id=${createRequestId}`).set(auth);
    expect(usage.body.data[0]).toMatchObject({
      operation: 'createVideo',
      model: 'local:video',
      status: 202,
      units: 4,
      media: { seconds: 4 },
    });
  });

  it('takes multipart like the SDK, with an input image; a file that is not an image is 422', async () => {
    const png = await sampleImage('png', 64, 64);
    const res = await request(made.app)
      .post('/v1/videos')
      .set(auth)
      .field('model', 'local:video')
      .field('prompt', 'a red balloon rising')
      .field('seconds', '4')
      .field('size', '160x120')
      .attach('input_reference', Buffer.from(png), { filename: 'start.png', contentType: 'image/png' });
    expect(res.status).toBe(202);
    expect((await finished(res.body.id)).status).toBe('completed');
    const bad = await request(made.app)
      .post('/v1/videos')
      .set(auth)
      .field('prompt', 'x')
      .attach('input_reference', Buffer.from('%PDF-1.4 not an image'), {
        filename: 'doc.png',
        contentType: 'image/png',
      });
    expect(bad.status).toBe(422);
    expect(bad.body.error.param).toBe('input_reference');
  });

  it('refuses bad shapes before queueing, naming the parameter', async () => {
    const ask = (body: object) =>
      request(made.app)
        .post('/v1/videos')
        .set(auth)
        .send({ prompt: 'x', ...body });
    const odd = await ask({ size: '321x240' });
    expect([odd.status, odd.body.error.param]).toEqual([400, 'size']);
    const huge = await ask({ size: '4000x4000' });
    expect([huge.status, huge.body.error.param]).toEqual([400, 'size']);
    const seconds = await ask({ seconds: '7' });
    expect(seconds.status).toBe(400);
    expect(JSON.stringify(seconds.body.error)).toMatch(/seconds/);
    const both = await ask({ input_reference: { image_url: 'data:image/png;base64,AAAA', file_id: 'file_x' } });
    expect(both.status).toBe(400);
    // What the guard refuses without a lookup (an IP literal) is still refused before the 202.
    const private_ = await ask({ input_reference: { image_url: 'http://127.0.0.1:1/x.png' } });
    expect(private_.status).toBe(422);
    expect(private_.body.error).toMatchObject({ code: 'image_url_refused', param: 'input_reference.image_url' });
    const unknownFile = await ask({ input_reference: { file_id: 'file_unknown' } });
    expect([unknownFile.status, unknownFile.body.error.code]).toEqual([404, 'file_not_found']);
    expect(
      (await made.videoTasks.list({ keyId: (await made.keys.list())[0].id, limit: 100, order: 'asc' })).tasks.every(
        (task) => task.prompt !== 'x',
      ),
    ).toBe(true);
  });
});

describe('an input image by URL or stored file fails the task, after the 202, with the error a 4xx would carry', () => {
  it('a name resolving to a private address: image_url_refused on the task', async () => {
    // The test DNS resolves localhost to 127.0.0.1: only the fetch's own lookup finds it is private.
    const res = await request(made.app)
      .post('/v1/videos')
      .set(auth)
      .send({
        prompt: 'from a private host',
        size: '64x64',
        input_reference: { image_url: 'http://localhost:9/a.png' },
      });
    expect(res.status).toBe(202);
    const done = await finished(res.body.id);
    expect(done).toMatchObject({ status: 'failed', error: { code: 'image_url_refused' } });
    expect((done.error as { message: string }).message).toMatch(
      /^input_reference\.image_url could not be used: the gateway refuses to fetch it \(localhost resolves to a non-public address\)\.$/,
    );
  });

  it('the MCP create_video tool takes the same path: a queued task, failed after the answer', async () => {
    const result = await mcpToolCall(made.app, made.key, 'create_video', {
      prompt: 'through MCP from a private host',
      size: '64x64',
      image_url: 'http://localhost:9/a.png',
    });
    expect(result.isError).not.toBe(true);
    const keyId = (await made.keys.verify(made.key))!.id;
    const task = (await made.videoTasks.list({ keyId, limit: 100, order: 'desc' })).tasks.find(
      (row) => row.prompt === 'through MCP from a private host',
    );
    expect(task).toBeDefined();
    expect(await finished(task!.id)).toMatchObject({ status: 'failed', error: { code: 'image_url_refused' } });
  });

  it('a name that does not resolve: image_url_unreachable on the task', async () => {
    const res = await request(made.app)
      .post('/v1/videos')
      .set(auth)
      .send({
        prompt: 'from nowhere',
        size: '64x64',
        input_reference: { image_url: 'http://nowhere.example.test/a.png' },
      });
    expect(res.status).toBe(202);
    const done = await finished(res.body.id);
    expect(done).toMatchObject({ status: 'failed', error: { code: 'image_url_unreachable' } });
    expect((done.error as { message: string }).message).toMatch(
      /^input_reference\.image_url could not be used: fetching it failed/,
    );
  });

  it('a stored file whose bytes are not readable as an image: invalid_image on the task', async () => {
    // Stored as a PNG by its magic, but cut short: only reading the bytes shows the header is missing.
    const file = await request(made.app)
      .post('/v1/files')
      .set(auth)
      .field('purpose', 'vision')
      .attach('file', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), 'cut.png');
    expect(file.status).toBe(200);
    const res = await request(made.app)
      .post('/v1/videos')
      .set(auth)
      .send({ prompt: 'from a cut file', size: '64x64', input_reference: { file_id: file.body.id } });
    expect(res.status).toBe(202);
    expect(await finished(res.body.id)).toMatchObject({ status: 'failed', error: { code: 'invalid_image' } });
  });

  it('a stored file that is not an image is refused before the 202 by its stored type', async () => {
    const file = await request(made.app)
      .post('/v1/files')
      .set(auth)
      .field('purpose', 'vision')
      .attach('file', Buffer.from('plain words'), 'a.txt');
    const res = await request(made.app)
      .post('/v1/videos')
      .set(auth)
      .send({ prompt: 'from text', size: '64x64', input_reference: { file_id: file.body.id } });
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({ code: 'invalid_image', param: 'input_reference' });
  });
});

describe('GET /v1/videos and /v1/videos/{id}', () => {
  it('pages the caller’s own tasks, and another key sees none of them', async () => {
    for (const n of [1, 2, 3]) {
      await request(made.app)
        .post('/v1/videos')
        .set(auth)
        .send({ prompt: `page ${n}`, seconds: '4', size: '64x64' });
    }
    const first = await request(made.app).get('/v1/videos?limit=2').set(auth);
    assertMatchesSchema('VideoList', first.body);
    expect(first.body.data.map((video: { prompt: string }) => video.prompt)).toEqual(['page 3', 'page 2']);
    expect(first.body.has_more).toBe(true);
    const next = await request(made.app).get(`/v1/videos?limit=2&after=${first.body.last_id}`).set(auth);
    expect(next.body.data[0].prompt).toBe('page 1');
    const { key: other } = await made.keys.create({ name: 'other' });
    const theirs = await request(made.app)
      .get(`/v1/videos/${first.body.data[0].id}`)
      .set('authorization', `Bearer ${other}`);
    expect(theirs.status).toBe(404);
    const unknown = await request(made.app)
      .get('/v1/videos/video_00000000000000000000000000000000')
      .set('authorization', `Bearer ${other}`);
    expect(unknown.body).toEqual({ error: { ...theirs.body.error, message: expect.any(String) } });
    const list = await request(made.app).get('/v1/videos').set('authorization', `Bearer ${other}`);
    expect(list.body.data).toEqual([]);
    for (const video of first.body.data) {
      await finished(video.id);
    }
  });
});

describe('POST /v1/videos answers before anything slow runs', () => {
  /**
   * Occupies every thread of libuv's pool (where file writes, DNS and sharp's work queue, media workers' too):
   * each thread blocks opening a FIFO for reading until `release` opens its writing end.
   */
  function holdLibuvPool(): { release: () => void } {
    const dir = mkdtempSync(join(tmpdir(), 'omnigate-uv-'));
    const threads = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
    const fifos = Array.from({ length: threads }, (_, n) => join(dir, `fifo${n}`));
    const opened = fifos.map((fifo) => {
      execFileSync('mkfifo', [fifo]);
      return open(fifo, 'r').then((handle) => handle.close());
    });
    return {
      release() {
        for (const fifo of fifos) {
          // O_NONBLOCK: succeeds at once since a reader waits; the reader's open then returns.
          closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
        }
        void Promise.all(opened).then(() => rmSync(dir, { recursive: true, force: true }));
      },
    };
  }

  /** A 64x64 task from `image` as a multipart upload, as the SDK sends it. */
  const createWithImage = (t: TestApp, prompt: string, image: Buffer) =>
    request(t.app)
      .post('/v1/videos')
      .set('authorization', `Bearer ${t.key}`)
      .field('prompt', prompt)
      .field('size', '64x64')
      .attach('input_reference', image, { filename: 'start.png', contentType: 'image/png' });

  it('answers 202 with an input image while the media pool and the libuv pool are both held busy', async () => {
    const t = await createTestApp({ media: { ...DEFAULT_MEDIA_SETTINGS, workers: 1 } });
    const png = Buffer.from(await sampleImage('png', 640, 480));
    const tAuth = { authorization: `Bearer ${t.key}` };
    const stored = await request(t.app)
      .post('/v1/files')
      .set(tAuth)
      .field('purpose', 'vision')
      .attach('file', png, 'start.png');
    expect(stored.status).toBe(200);
    let releaseSlot: () => void = () => undefined;
    const slot = t.mediaPool.use(
      new AbortController().signal,
      () => new Promise<void>((resolve) => (releaseSlot = resolve)),
    );
    const uv = holdLibuvPool();
    let byFile: request.Response | undefined;
    try {
      // Anything that waited on either pool before answering would hang here until the test's timeout.
      const plain = await request(t.app)
        .post('/v1/videos')
        .set(tAuth)
        .send({ prompt: 'control', seconds: '4', size: '64x64' });
      expect(plain.status).toBe(202);
      const withImage = await createWithImage(t, 'a red balloon rising', png);
      expect(withImage.status).toBe(202);
      expect(withImage.body).toMatchObject({ status: 'queued', size: '64x64' });
      // A stored file is read after the answer too: only its row is looked at before.
      byFile = await request(t.app)
        .post('/v1/videos')
        .set(tAuth)
        .send({ prompt: 'from a stored file', size: '64x64', input_reference: { file_id: stored.body.id } });
      expect(byFile.status).toBe(202);
    } finally {
      uv.release();
      releaseSlot();
      await slot;
    }
    // The image is stored (the file read first) after the answer; the tasks then render from it like any other.
    const created = (await request(t.app).get('/v1/videos?limit=2').set(tAuth)).body.data as Array<{ id: string }>;
    expect(created.map((video) => video.id)).toContain(byFile?.body.id);
    for (const { id } of created) {
      const done = await finishedVideo(t.app, t.key, id);
      expect(done.status).toBe('completed');
      const task = (await t.videoTasks.get(id, (await t.keys.verify(t.key))!.id))!;
      expect((await t.blobs.get(task.inputBlob ?? ''))?.mediaType).toBe('image/png');
    }
    await t.videoRunner.stop(0);
    await t.registry.close();
  });

  it('answers 202 for an image URL while its server holds the answer, and completes the task once it answers', async () => {
    const png = Buffer.from(await sampleImage('png', 64, 64));
    let arrived: () => void = () => undefined;
    const requested = new Promise<void>((resolve) => (arrived = resolve));
    let answer: () => void = () => undefined;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const server = createServer((_req, res) => {
      arrived();
      void answered.then(() => res.writeHead(200, { 'content-type': 'image/png' }).end(png));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const t = await createTestApp({
      tools: {
        // A public-looking name for the loopback server, and a guard that lets this test reach it.
        resolveHost: async (hostname) =>
          hostname === 'images.example.test' ? [{ address: '127.0.0.1', family: 4 }] : [],
        blockedReason: () => undefined,
      },
    });
    const keyId = (await t.keys.verify(t.key))!.id;
    try {
      const res = await request(t.app)
        .post('/v1/videos')
        .set('authorization', `Bearer ${t.key}`)
        .send({
          prompt: 'from a slow server',
          size: '64x64',
          input_reference: { image_url: `http://images.example.test:${port}/start.png` },
        });
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({ status: 'queued', error: null });
      // The fetch starts after the answer and is still held: the task waits for its image.
      await requested;
      expect(await t.videoTasks.get(res.body.id, keyId)).toMatchObject({
        status: 'queued',
        inputBlob: PENDING_INPUT_BLOB,
      });
      answer();
      const done = await finishedVideo(t.app, t.key, res.body.id);
      expect(done.status).toBe('completed');
      const task = (await t.videoTasks.get(res.body.id, keyId))!;
      expect(Buffer.compare(Buffer.from((await readBlob(t.blobs, task.inputBlob!))!.data), png)).toBe(0);
    } finally {
      answer();
      server.close();
      await t.videoRunner.stop(0);
      await t.registry.close();
    }
  });

  it('fails the task, keeping nothing, when its input image stored after the answer does not fit the quota', async () => {
    const t = await createTestApp({ files: { quotaBytes: 20_000 } });
    const noise = await sharp(randomBytes(200 * 200 * 3), { raw: { width: 200, height: 200, channels: 3 } })
      .png()
      .toBuffer();
    expect(noise.length).toBeGreaterThan(20_000);
    const res = await createWithImage(t, 'too large to keep', noise);
    expect(res.status).toBe(202);
    const done = await finishedVideo(t.app, t.key, res.body.id);
    expect(done).toMatchObject({ status: 'failed', error: { code: 'storage_quota_exceeded' } });
    expect(await t.blobs.heldBytes((await t.keys.verify(t.key))!.id, Math.floor(Date.now() / 1000))).toBe(0);
    await t.videoRunner.stop(0);
    await t.registry.close();
  });
});
