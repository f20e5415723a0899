/**
 * A caller's image past 40 Mpx is refused from its header with a 400 naming the limit, before anything is
 * queued or decoded: as a video's input_reference (multipart, as the SDK sends it) and as image_understanding's
 * stored file. A video's stored file (input_reference.file_id) is read after the 202, so there the same error
 * fails the task instead. The PNG is made here with sharp: one colour, 7000×6000, so it is about a megabyte.
 */
import request from 'supertest';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { expectRequestId } from '../helpers/contract-assertions.js';
import { createTestApp, type TestApp } from '../helpers/create-test-app.js';

const made: TestApp = await createTestApp({ maxBodyBytes: 8 * 1024 * 1024 });
const auth = { authorization: `Bearer ${made.key}` };
let huge: Buffer;

beforeAll(async () => {
  await made.videoRunner.stop(0);
  huge = await sharp({ create: { width: 7000, height: 6000, channels: 3, background: '#3366cc' } })
    .png({ compressionLevel: 1, adaptiveFiltering: false })
    .toBuffer();
});

afterAll(async () => {
  await made.registry.close();
});

/** The huge image as the key's stored file, as `POST /v1/files` keeps it. */
async function storeHuge(): Promise<request.Response> {
  const upload = await request(made.app)
    .post('/v1/files')
    .set(auth)
    .field('purpose', 'vision')
    .attach('file', huge, 'huge.png');
  expect(upload.status).toBe(200);
  return upload;
}

describe('the input pixel limit', () => {
  it('refuses a video input_reference of 42 Mpx with a 400 naming the limit, and queues nothing', async () => {
    const res = await request(made.app)
      .post('/v1/videos')
      .set(auth)
      .field('model', 'local:video')
      .field('prompt', 'a huge still')
      .field('size', '320x240')
      .attach('input_reference', huge, { filename: 'huge.png', contentType: 'image/png' });
    expect(res.status).toBe(400);
    expectRequestId(res);
    expect(res.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'image_too_large',
      param: 'input_reference',
    });
    expect(res.body.error.message).toMatch(/7000×6000 .*40 Mpx/);
    expect(
      (await made.videoTasks.list({ keyId: (await made.keys.verify(made.key))!.id, limit: 10, order: 'asc' })).tasks,
    ).toEqual([]);
  });

  it('takes the same image as a video input_reference.file_id with a 202, then fails the task with image_too_large', async () => {
    const upload = await storeHuge();
    // The file is read after the answer (a stored file may be 50 MB), so its header is checked there.
    const res = await request(made.app)
      .post('/v1/videos')
      .set(auth)
      .send({ prompt: 'a huge stored still', size: '320x240', input_reference: { file_id: upload.body.id } });
    expect(res.status).toBe(202);
    const keyId = (await made.keys.verify(made.key))!.id;
    await vi.waitFor(async () => expect((await made.videoTasks.get(res.body.id, keyId))?.status).toBe('failed'));
    const shown = await request(made.app).get(`/v1/videos/${res.body.id}`).set(auth);
    expect(shown.body).toMatchObject({ status: 'failed', error: { code: 'image_too_large' } });
    expect(shown.body.error.message).toMatch(/7000×6000 .*40 Mpx/);
  });

  it('refuses the same image as image_understanding’s file with the same 400', async () => {
    const upload = await storeHuge();
    const res = await request(made.app)
      .post('/v1/tools/image_understanding')
      .set(auth)
      .send({ prompt: 'what is it?', file_id: upload.body.id });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'image_too_large', param: 'file_id' });
  });

  it('reads a stored image within the limit by file_id for image_understanding', async () => {
    const small = await sharp({ create: { width: 640, height: 480, channels: 3, background: '#3366cc' } })
      .png()
      .toBuffer();
    const upload = await request(made.app)
      .post('/v1/files')
      .set(auth)
      .field('purpose', 'vision')
      .attach('file', small, 'small.png');
    const res = await request(made.app)
      .post('/v1/tools/image_understanding')
      .set(auth)
      .send({ prompt: 'what is it?', file_id: upload.body.id });
    expect(res.status).toBe(200);
    expect(res.body.analysis).toMatchObject({ media_type: 'image/png', width: 640, height: 480 });
  });
});
