/**
 * `POST /v1/tools/image_understanding` over HTTP (supertest, response validation on) and through the official
 * `openai` SDK's raw `client.post`, against the built-in analysis: real images made with sharp, decoded facts.
 */
import OpenAI from 'openai';
import request from 'supertest';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestApp } from '../helpers/create-test-app.js';
import { openAIServer } from '../conformance/start-server.js';

let jpegDataUrl: string;
let pngDataUrl: string;

beforeAll(async () => {
  // A navy JPEG with EXIF camera tags, and an opaque PNG that still has an alpha channel.
  const jpeg = await sharp({ create: { width: 80, height: 40, channels: 3, background: { r: 10, g: 20, b: 100 } } })
    .jpeg()
    .withExif({ IFD0: { Make: 'Omnicam', Model: 'Test 1', Software: 'omnigate-tests' } })
    .toBuffer();
  jpegDataUrl = `data:image/jpeg;base64,${jpeg.toString('base64')}`;
  const png = await sharp({ create: { width: 30, height: 60, channels: 4, background: { r: 250, g: 250, b: 250, alpha: 1 } } }).png().toBuffer();
  pngDataUrl = `data:image/png;base64,${png.toString('base64')}`;
});

describe('POST /v1/tools/image_understanding (built-in analysis)', () => {
  const t = createTestApp();
  const post = (body: unknown) => request(t.app).post('/v1/tools/image_understanding').set('authorization', `Bearer ${t.key}`).send(body as object);

  it('reports format, size, colours and EXIF of a JPEG', async () => {
    const res = await post({ prompt: 'Describe it', image_url: jpegDataUrl });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'tool.result', tool: 'image_understanding', model: 'local:vision' });
    expect(res.body.id).toMatch(/^tr_/);
    expect(res.body.analysis).toMatchObject({
      media_type: 'image/jpeg',
      format: 'jpeg',
      width: 80,
      height: 40,
      is_opaque: true,
      dominant_colour: { name: 'navy' },
      exif: { make: 'Omnicam', model: 'Test 1', software: 'omnigate-tests' },
    });
    expect(res.body.analysis.brightness).toBeLessThan(0.2);
    expect(res.body.content).toMatch(/^80×40 JPEG \(landscape\), opaque, very dark .* mostly navy.*taken with Omnicam Test 1/);
  });

  it('says an opaque PNG with an alpha channel is opaque', async () => {
    const res = await post({ prompt: 'x', image_url: pngDataUrl });
    expect(res.status).toBe(200);
    expect(res.body.analysis).toMatchObject({ has_alpha: true, is_opaque: true, exif: null, dominant_colour: { name: 'white' } });
  });

  it.each([
    ['both sources', { prompt: 'x', image_url: 'data:image/png;base64,AA==', file_id: 'file-1' }, 400],
    ['neither source', { prompt: 'x' }, 400],
    ['not an image', { prompt: 'x', image_url: `data:image/png;base64,${Buffer.from('hello world, not a picture').toString('base64')}` }, 422],
    ['a data URL that is not base64', { prompt: 'x', image_url: 'data:image/png,abc' }, 400],
    ['an unknown file id', { prompt: 'x', file_id: 'file-unknown' }, 404],
    // The SSRF guard's refusal, as for a video's input_reference: 502 upstream_url_refused, nothing fetched.
    ['a loopback URL', { prompt: 'x', image_url: 'http://127.0.0.1:9/a.png' }, 502],
  ] as const)('%s is a %i in the OpenAI envelope', async (_name, body, status) => {
    const res = await post(body);
    expect(res.status).toBe(status);
    expect(res.body.error).toMatchObject({ message: expect.any(String) });
    if (status === 502) {
      expect(res.body.error.code).toBe('upstream_url_refused');
    }
  });

  it('a key limited to local:chat gets 403 for the built-in analysis', async () => {
    const { key } = t.keys.create({ name: 'chat only', allowedModels: ['local:chat'] });
    const res = await request(t.app).post('/v1/tools/image_understanding').set('authorization', `Bearer ${key}`).send({ prompt: 'x', image_url: pngDataUrl });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('model_not_allowed');
  });
});

describe('the official openai SDK', () => {
  const context = openAIServer();

  it('posts to /tools/image_understanding and reads the tool result', async () => {
    const client: OpenAI = context.client;
    const result = await client.post<{ object: string; model: string; content: string; analysis: { width: number } }>('/tools/image_understanding', {
      body: { prompt: 'What colours?', image_url: pngDataUrl },
    });
    expect(result).toMatchObject({ object: 'tool.result', model: 'local:vision', analysis: { width: 30 } });
    expect(result.content).toMatch(/mostly white/);
  });
});
