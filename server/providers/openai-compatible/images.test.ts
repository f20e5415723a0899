import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sendBytes, sendJson, sendRedirect } from '../../../test/fakes/answers.js';
import { byPath, startFakeUpstream, type FakeUpstream } from '../../../test/fakes/fake-upstream.js';
import { sampleImage } from '../../../test/fakes/media-samples.js';
import type { CallContext, CallWarning } from '../../core/call-context.js';
import { UpstreamError } from '../../core/api-error.js';
import type { ImageCallOptions, ImageModel } from '../../core/models.js';
import { readImageHeader } from '../upstream/image-header.js';
import { DEFAULT_MAX_FETCH_BYTES } from '../upstream/safe-fetch.js';
import type { OpenAICompatibleConfig } from './http-client.js';
import { createOpenAICompatibleProvider, type OpenAICompatibleProvider } from './index.js';
import { rejection } from '../../../test/helpers/rejection.js';

const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const OPTIONS: ImageCallOptions = { prompt: 'a red fox in snow', n: 1, width: 640, height: 360, outputFormat: 'png' };

let upstream: FakeUpstream;
let internal: FakeUpstream;
let provider: OpenAICompatibleProvider;
let warnings: CallWarning[];
let png: Uint8Array;
let jpeg: Uint8Array;
let webp: Uint8Array;

function config(): OpenAICompatibleConfig {
  return {
    id: 'imgs',
    type: 'openai-compatible',
    base_url: `${upstream.origin}/v1`,
    api_key: 'sk-test-secret-0123456789',
    timeout_ms: 5_000,
    max_connections: 4,
    headers: {},
    responses: 'translate',
  };
}

function context(): CallContext {
  return { signal: AbortSignal.timeout(10_000), requestId: 'req_1', warn: (warning) => warnings.push(warning) };
}

function model(name = 'dall-e-3'): ImageModel {
  return provider.models.image!(name);
}

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const json =
  (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  (_request: unknown, res: ServerResponse) =>
    sendJson(res, status, JSON.stringify(body), headers);

beforeAll(async () => {
  [png, jpeg, webp] = await Promise.all([
    sampleImage('png', 640, 360),
    sampleImage('jpeg', 640, 360),
    sampleImage('webp', 1024, 1536),
  ]);
  upstream = await startFakeUpstream();
  internal = await startFakeUpstream((_request, res) => sendBytes(res, png, 'image/png'));
});

beforeEach(() => {
  provider = createOpenAICompatibleProvider(config());
  warnings = [];
  upstream.requests.length = 0;
});

afterEach(async () => {
  await provider.close();
  expect(internal.requests).toEqual([]);
});

afterAll(async () => {
  await Promise.all([upstream.close(), internal.close()]);
});

describe('OpenAI-compatible images', () => {
  it('posts /images/generations and returns the b64_json images as bytes', async () => {
    upstream.handle(
      json({
        created: 1,
        data: [{ b64_json: b64(png), revised_prompt: 'A red fox standing in fresh snow' }, { b64_json: b64(png) }],
      }),
    );
    const result = await model().generate({ ...OPTIONS, n: 2, quality: 'hd', style: 'vivid', user: 'u-1' }, context());
    const [request] = upstream.requests;
    expect(request!.url).toBe('/v1/images/generations');
    expect(request!.headers.authorization).toBe('Bearer sk-test-secret-0123456789');
    expect(request!.body).toEqual({
      model: 'dall-e-3',
      prompt: 'a red fox in snow',
      n: 2,
      size: '640x360',
      quality: 'hd',
      style: 'vivid',
      user: 'u-1',
      response_format: 'b64_json',
    });
    expect(result.images.map((image) => [sha(image.data), image.mediaType])).toEqual([
      [sha(png), 'image/png'],
      [sha(png), 'image/png'],
    ]);
    expect(result).toMatchObject({
      width: 640,
      height: 360,
      revisedPrompt: 'A red fox standing in fresh snow',
      usage: { images: 2, pixels: 2 * 640 * 360 },
    });
    expect(warnings).toEqual([]);
  });

  it('sends gpt-image models no response_format, and takes their format and size from the bytes', async () => {
    upstream.handle(json({ created: 1, size: '1024x1536', output_format: 'webp', data: [{ b64_json: b64(webp) }] }));
    const result = await model('gpt-image-1').generate(
      { prompt: 'tall', n: 1, outputFormat: 'webp', outputCompression: 60, background: 'opaque', moderation: 'low' },
      context(),
    );
    expect(upstream.requests[0]!.body).toEqual({
      model: 'gpt-image-1',
      prompt: 'tall',
      n: 1,
      output_format: 'webp',
      output_compression: 60,
      background: 'opaque',
      moderation: 'low',
    });
    expect(result.images[0]!.mediaType).toBe('image/webp');
    expect(readImageHeader(result.images[0]!.data)).toEqual({ mediaType: 'image/webp', width: 1024, height: 1536 });
    expect([result.width, result.height]).toEqual([1024, 1536]);
    expect(result.revisedPrompt).toBeUndefined();
  });

  it("fetches an image answered as a URL on the upstream's own origin; the media type comes from the bytes", async () => {
    upstream.handle(
      byPath({
        '/v1/images/generations': json({ created: 1, data: [{ url: `${upstream.origin}/files/img-1?sig=abc` }] }),
        // The header lies: the bytes decide.
        '/files/img-1': (_request, res) => sendBytes(res, jpeg, 'application/octet-stream'),
      }),
    );
    const result = await model().generate(OPTIONS, context());
    expect(upstream.requests.map((request) => request.url)).toEqual(['/v1/images/generations', '/files/img-1?sig=abc']);
    expect(sha(result.images[0]!.data)).toBe(sha(jpeg));
    expect(result.images[0]!.mediaType).toBe('image/jpeg');
    expect(JSON.stringify(result)).not.toContain(upstream.origin);
    expect(warnings).toEqual([{ field: 'output_format', reason: 'upstream imgs answered image/jpeg instead of png' }]);
  });

  it('takes a data URL in url without fetching anything', async () => {
    upstream.handle(json({ created: 1, data: [{ url: `data:image/png;base64,${b64(png)}` }] }));
    const result = await model().generate(OPTIONS, context());
    expect(sha(result.images[0]!.data)).toBe(sha(png));
    expect(upstream.requests).toHaveLength(1);
  });

  it.each([
    ['another port on loopback', () => `${internal.origin}/secret.png`, /127\.0\.0\.1 is a loopback address/],
    [
      'the cloud metadata address',
      () => 'http://169.254.169.254/latest/meta-data/iam/',
      /169\.254\.169\.254 is a link-local/,
    ],
    [
      'a redirect from the trusted origin to loopback',
      () => `${upstream.origin}/files/moved`,
      /127\.0\.0\.1 is a loopback address/,
    ],
  ])('refuses a URL to %s with a 502 and fetches nothing', async (_name, url, message) => {
    upstream.handle(
      byPath({
        '/v1/images/generations': json({ created: 1, data: [{ url: url() }] }),
        '/files/moved': (_request, res) => sendRedirect(res, `${internal.origin}/secret.png`),
      }),
    );
    const error = await rejection(model().generate(OPTIONS, context()));
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ status: 502, code: 'upstream_url_refused' });
    expect(error.message).toMatch(message);
  });

  it('refuses an image larger than the fetch limit', async () => {
    const huge = new Uint8Array(DEFAULT_MAX_FETCH_BYTES + 1);
    huge.set(png);
    upstream.handle(
      byPath({
        '/v1/images/generations': json({ created: 1, data: [{ url: `${upstream.origin}/files/huge.png` }] }),
        '/files/huge.png': (_request, res) => sendBytes(res, huge, 'image/png'),
      }),
    );
    const error = await rejection(model().generate(OPTIONS, context()));
    expect(error).toMatchObject({ status: 502, code: 'upstream_result_too_large' });
  });

  it.each([
    [400, { error: { message: "Invalid size '640x360'" } }, 400, 'upstream_rejected'],
    [401, { error: { message: 'Incorrect API key provided: sk-te***6789' } }, 502, 'upstream_error'],
    [429, { error: { message: 'slow down' } }, 429, 'rate_limit_exceeded'],
    [500, { error: { message: 'boom' } }, 502, 'upstream_error'],
    [503, 'Service Unavailable', 502, 'upstream_error'],
  ])('maps an upstream %i to %i', async (status, body, expected, code) => {
    upstream.handle(json(body, status, { 'retry-after': '7' }));
    const error = await rejection(model().generate(OPTIONS, context()));
    expect(error).toMatchObject({ status: expected, code });
    expect(error.message).not.toContain('sk-te');
    if (expected === 429) {
      expect(error.headers['retry-after']).toBe('7');
    }
  });

  it.each([
    ['no images', { created: 1, data: [] }, /no images/],
    ['neither b64_json nor url', { created: 1, data: [{ revised_prompt: 'x' }] }, /neither b64_json nor url/],
    [
      'bytes that are no image',
      { created: 1, data: [{ b64_json: b64(new TextEncoder().encode('<html>error</html>')) }] },
      /not a png, jpeg, webp or gif/,
    ],
  ])('answers 502 for %s', async (_name, body, message) => {
    upstream.handle(json(body));
    const error = await rejection(model().generate(OPTIONS, context()));
    expect(error.status).toBe(502);
    expect(error.message).toMatch(message);
  });
});
