/**
 * Media over HTTP judged by what it decodes to, not by its header bytes: an image's pixels (sharp), a video's
 * frames (ffmpeg; audio is decoded in media.test.ts), and a finished video's content expiring after the
 * retention period (`video_expired`), on an injected clock.
 */
import sharp from 'sharp';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { binary } from '../helpers/binary-body.js';
import { createTestApp } from '../helpers/create-test-app.js';
import { decodeVideo, meanBrightness } from '../helpers/decode-video.js';
import { finishedVideo } from '../helpers/finished-video.js';

const RETENTION_SECONDS = 600;
const clock = { ms: Date.UTC(2026, 0, 1) };
const made = await createTestApp({ now: () => clock.ms, videos: { retentionSeconds: RETENTION_SECONDS } });
const auth = { authorization: `Bearer ${made.key}` };
afterAll(async () => {
  await made.videoRunner.stop(0);
  await made.registry.close();
});

async function pixelsOf(prompt: string) {
  const res = await request(made.app)
    .post('/v1/images/generations')
    .set(auth)
    .send({ prompt, size: '256x256', response_format: 'b64_json' });
  expect(res.status).toBe(200);
  const { data, info } = await sharp(Buffer.from(res.body.data[0].b64_json as string, 'base64'))
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data, info };
}

/** Mean luma (Rec. 709) and its standard deviation over all pixels of raw RGB(A). */
function luma({ data, info }: Awaited<ReturnType<typeof pixelsOf>>) {
  const values: number[] = [];
  for (let i = 0; i < data.length; i += info.channels) {
    values.push(0.2126 * data[i] + 0.7152 * data[i + 1] + 0.0722 * data[i + 2]);
  }
  const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
  const spread = Math.sqrt(values.reduce((sum, value) => sum + (value - mean) ** 2, 0) / values.length);
  return { mean, spread };
}

describe('media decoded', () => {
  it('an image decodes to the asked size with a picture in it, dark for night and bright for day', async () => {
    const night = await pixelsOf('a city skyline at midnight under a black starry sky');
    const day = await pixelsOf('a bright sunny beach at noon under a clear blue sky');
    expect(night.info).toMatchObject({ width: 256, height: 256 });
    expect(night.data.length).toBe(256 * 256 * night.info.channels);
    // Not one flat colour: a scene has edges and shading.
    expect(luma(night).spread).toBeGreaterThan(5);
    expect(luma(day).spread).toBeGreaterThan(5);
    expect(luma(night).mean).toBeLessThan(luma(day).mean - 30);
  });

  it('a video decodes to 24 frames a second of the asked size, and its content expires after the retention period', async () => {
    const created = await request(made.app)
      .post('/v1/videos')
      .set(auth)
      .send({ model: 'local:video', prompt: 'waves rolling onto a sunny beach', seconds: '4', size: '320x240' });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const done = await finishedVideo(made.app, made.key, created.body.id as string);
    expect(done).toMatchObject({ status: 'completed', expires_at: Math.floor(clock.ms / 1000) + RETENTION_SECONDS });

    const content = `/v1/videos/${created.body.id}/content`;
    const mp4 = await binary(request(made.app).get(content).set(auth));
    expect(mp4.status).toBe(200);
    const decoded = await decodeVideo(mp4.body as Buffer, 320, 240);
    expect(decoded.frames).toHaveLength(4 * 24);
    expect(decoded.frames[0].length).toBe(320 * 240 * 4);
    expect(meanBrightness(decoded.frames[0], 320, 240)).toBeGreaterThan(20); // a sunny scene, not a black frame

    // One second before the end of the retention period the content is served; at its end it has expired.
    clock.ms += (RETENTION_SECONDS - 1) * 1000;
    expect((await request(made.app).get(content).set(auth)).status).toBe(200);
    clock.ms += 1000;
    const expired = await request(made.app).get(content).set(auth);
    expect(expired.status).toBe(404);
    expect(expired.body.error).toMatchObject({ code: 'video_expired' });
  });
});
