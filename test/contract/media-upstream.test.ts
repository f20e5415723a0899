/**
 * Media through the HTTP contract on an OpenAI-compatible upstream (the one fake upstream, on loopback): an image
 * the upstream answers by URL is fetched and re-served under our own signed link (the caller never sees the
 * upstream's URL), a URL pointing anywhere private is refused with 502, speech bytes pass through with the
 * format's Content-Type, and a provider-named model (`fake:dall-e-3`) is an image model without configuration.
 */
import { createHash } from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProviderConfig } from '../../server/config.js';
import { sendBytes, sendJson } from '../fakes/answers.js';
import { byPath, startFakeUpstream, type FakeUpstream } from '../fakes/fake-upstream.js';
import { sampleAudio, sampleImage } from '../fakes/media-samples.js';
import { expectRequestId } from '../helpers/contract-assertions.js';
import { createTestApp, type TestApp } from '../helpers/create-test-app.js';
import { assertMatchesSchema } from '../helpers/spec-schemas.js';

let upstream: FakeUpstream;
let made: TestApp;
let picture: Uint8Array;
let speech: Uint8Array;
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

beforeAll(async () => {
  picture = await sampleImage('png', 96, 64);
  speech = await sampleAudio('mp3', 1);
  upstream = await startFakeUpstream();
  const provider: ProviderConfig = {
    id: 'fake',
    type: 'openai-compatible',
    base_url: `${upstream.origin}/v1`,
    timeout_ms: 5000,
    max_connections: 4,
    headers: {},
    responses: 'translate',
  };
  made = await createTestApp({
    providers: [provider],
    models: [
      { provider: 'fake', model: 'gpt-image-1', type: 'image', aliases: ['painter'] },
      { provider: 'fake', model: 'tts-1', type: 'speech', aliases: [] },
    ],
  });
});

afterAll(async () => {
  await made.registry.close();
  await upstream.close();
});

const auth = () => ({ authorization: `Bearer ${made.key}` });

describe('upstream images', () => {
  it('re-serves an image the upstream answered by URL under our own signed link, bytes intact', async () => {
    upstream.handle(
      byPath({
        '/v1/images/generations': (_request, res) =>
          sendJson(
            res,
            200,
            JSON.stringify({
              created: 1,
              data: [{ url: `${upstream.origin}/files/cat.png`, revised_prompt: 'a cat, refined' }],
            }),
          ),
        '/files/cat.png': (_request, res) => sendBytes(res, picture, 'application/octet-stream'),
      }),
    );
    const res = await request(made.app)
      .post('/v1/images/generations')
      .set(auth())
      .send({ model: 'painter', prompt: 'a cat' });
    expect(res.status).toBe(200);
    assertMatchesSchema('ImagesResponse', res.body);
    expect(res.body).toMatchObject({
      output_format: 'png',
      size: '96x64',
      data: [{ revised_prompt: 'a cat, refined' }],
    });
    const url = new URL(res.body.data[0].url);
    expect(url.pathname).toMatch(/^\/v1\/media\/media_/);
    expect(JSON.stringify(res.body)).not.toContain(upstream.origin);
    const image = await request(made.app)
      .get(url.pathname + url.search)
      .buffer(true);
    expect(image.headers['content-type']).toBe('image/png');
    expect(sha(image.body as Buffer)).toBe(sha(picture));
    expect(upstream.requests.find((r) => r.url === '/v1/images/generations')?.body).toMatchObject({
      model: 'gpt-image-1',
      prompt: 'a cat',
    });
  });

  it('refuses an upstream URL on a private address with 502 and fetches nothing there', async () => {
    const elsewhere = await startFakeUpstream((_request, res) => sendBytes(res, picture, 'image/png'));
    try {
      upstream.handle(
        byPath({
          '/v1/images/generations': (_request, res) =>
            sendJson(res, 200, JSON.stringify({ created: 1, data: [{ url: `${elsewhere.origin}/secret.png` }] })),
        }),
      );
      const res = await request(made.app)
        .post('/v1/images/generations')
        .set(auth())
        .send({ model: 'painter', prompt: 'a cat', response_format: 'b64_json' });
      expect(res.status).toBe(502);
      assertMatchesSchema('ErrorResponse', res.body);
      expectRequestId(res);
      expect(res.body.error.code).toBe('upstream_url_refused');
      expect(elsewhere.requests).toEqual([]);
    } finally {
      await elsewhere.close();
    }
  });

  it('takes a provider-named model as an image model without configuration', async () => {
    upstream.handle(
      byPath({
        '/v1/images/generations': (_request, res) =>
          sendJson(
            res,
            200,
            JSON.stringify({ created: 1, data: [{ b64_json: Buffer.from(picture).toString('base64') }] }),
          ),
      }),
    );
    const res = await request(made.app)
      .post('/v1/images/generations')
      .set(auth())
      .send({ model: 'fake:dall-e-3', prompt: 'a cat', response_format: 'b64_json' });
    expect(res.status).toBe(200);
    expect(sha(Buffer.from(res.body.data[0].b64_json, 'base64'))).toBe(sha(picture));
    expect(upstream.requests.at(-1)?.body).toMatchObject({ model: 'dall-e-3' });
  });
});

describe('upstream speech', () => {
  it('passes the audio through with the format’s Content-Type and records its seconds', async () => {
    upstream.handle(byPath({ '/v1/audio/speech': (_request, res) => sendBytes(res, speech, 'audio/mpeg') }));
    const res = await request(made.app)
      .post('/v1/audio/speech')
      .set(auth())
      .send({ model: 'fake:tts-1', input: 'hello', voice: 'alloy' })
      .buffer(true)
      .parse((response, callback) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => callback(null, Buffer.concat(chunks)));
      });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('audio/mpeg');
    expect(sha(res.body as Buffer)).toBe(sha(speech));
    await new Promise((resolve) => setTimeout(resolve, 30));
    const usage = await request(made.app)
      .get(`/v1/usage?request_id=${expectRequestId(res)}`)
      .set(auth());
    expect(usage.body.data[0]).toMatchObject({
      operation: 'createSpeech',
      provider: 'fake',
      units: 5,
      media: { characters: 5 },
    });
    expect(usage.body.data[0].media.seconds).toBeGreaterThan(0.9);
  });
});
