/**
 * `POST /v1/tools/image_understanding` and `POST /v1/tools/web_search` over HTTP (supertest, response
 * validation on) and through the official `openai` SDK's raw `client.post`: the built-in analysis of real images
 * made with sharp, and `local:search` over files uploaded through `POST /v1/files` (searchable per key).
 */
import type OpenAI from 'openai';
import request from 'supertest';
import sharp from 'sharp';
import { once } from 'node:events';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/create-test-app.js';
import { assertMatchesSchema } from '../helpers/spec-schemas.js';
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
  const png = await sharp({
    create: { width: 30, height: 60, channels: 4, background: { r: 250, g: 250, b: 250, alpha: 1 } },
  })
    .png()
    .toBuffer();
  pngDataUrl = `data:image/png;base64,${png.toString('base64')}`;
});

describe('POST /v1/tools/image_understanding (built-in analysis)', async () => {
  const t = await createTestApp();
  const post = (body: unknown) =>
    request(t.app)
      .post('/v1/tools/image_understanding')
      .set('authorization', `Bearer ${t.key}`)
      .send(body as object);

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
    expect(res.body.content).toMatch(
      /^80×40 JPEG \(landscape\), opaque, very dark .* mostly navy.*taken with Omnicam Test 1/,
    );
  });

  it('says an opaque PNG with an alpha channel is opaque', async () => {
    const res = await post({ prompt: 'x', image_url: pngDataUrl });
    expect(res.status).toBe(200);
    expect(res.body.analysis).toMatchObject({
      has_alpha: true,
      is_opaque: true,
      exif: null,
      dominant_colour: { name: 'white' },
    });
  });

  it.each([
    ['both sources', { prompt: 'x', image_url: 'data:image/png;base64,AA==', file_id: 'file-1' }, 400],
    ['neither source', { prompt: 'x' }, 400],
    [
      'not an image',
      {
        prompt: 'x',
        image_url: `data:image/png;base64,${Buffer.from('hello world, not a picture').toString('base64')}`,
      },
      422,
    ],
    ['a data URL that is not base64', { prompt: 'x', image_url: 'data:image/png,abc' }, 400],
    ['an unknown file id', { prompt: 'x', file_id: 'file-unknown' }, 404],
    // The SSRF guard's refusal of the caller's own URL, as for a video's input_reference: 422 image_url_refused.
    ['a loopback URL', { prompt: 'x', image_url: 'http://127.0.0.1:9/a.png' }, 422],
  ] as const)('%s is a %i in the OpenAI envelope', async (_name, body, status) => {
    const res = await post(body);
    expect(res.status).toBe(status);
    expect(res.body.error).toMatchObject({ message: expect.any(String) });
    if ('image_url' in body && body.image_url.startsWith('http:')) {
      expect(res.body.error).toMatchObject({ code: 'image_url_refused', param: 'image_url' });
    }
  });

  it('a key limited to local:chat gets 403 for the built-in analysis', async () => {
    const { key } = await t.keys.create({ name: 'chat only', allowedModels: ['local:chat'] });
    const res = await request(t.app)
      .post('/v1/tools/image_understanding')
      .set('authorization', `Bearer ${key}`)
      .send({ prompt: 'x', image_url: pngDataUrl });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('model_not_allowed');
  });
});

describe('image_understanding in the media pool', () => {
  /** Takes the pool's only slot until `release()`: every generation after it waits or is refused. */
  function holdSlot(t: TestApp, owner?: string): { release: () => void; done: Promise<unknown> } {
    let release = () => {};
    const done = t.mediaPool.use(
      new AbortController().signal,
      () => new Promise<void>((resolve) => (release = resolve)),
      { owner },
    );
    return { release: () => release(), done };
  }

  it('is refused with 429 engine_busy and Retry-After when the pool and its queue are full', async () => {
    const t = await createTestApp({ media: { workers: 1, queueLimit: 0, jobTimeoutMs: 60_000 } });
    const held = holdSlot(t);
    const res = await request(t.app)
      .post('/v1/tools/image_understanding')
      .set('authorization', `Bearer ${t.key}`)
      .send({ prompt: 'x', image_url: pngDataUrl });
    held.release();
    await held.done;
    expect(res.status).toBe(429);
    expect(res.body.error.code).toBe('engine_busy');
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });

  it("counts against its key's cap: 429 key_jobs_limit when the key already holds its share of the pool", async () => {
    const t = await createTestApp({ media: { workers: 2, queueLimit: 4, perKeyLimit: 1, jobTimeoutMs: 60_000 } });
    const held = holdSlot(t, (await t.keys.verify(t.key))!.id);
    const res = await request(t.app)
      .post('/v1/tools/image_understanding')
      .set('authorization', `Bearer ${t.key}`)
      .send({ prompt: 'x', image_url: pngDataUrl });
    held.release();
    await held.done;
    expect(res.status).toBe(429);
    expect(res.body.error.code).toBe('key_jobs_limit');
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });

  it("is stopped with 504 generation_timeout past the pool's time limit", async () => {
    // Starting a worker alone takes longer than 1 ms.
    const t = await createTestApp({ media: { workers: 1, queueLimit: 4, jobTimeoutMs: 1 } });
    const res = await request(t.app)
      .post('/v1/tools/image_understanding')
      .set('authorization', `Bearer ${t.key}`)
      .send({ prompt: 'x', image_url: pngDataUrl });
    expect(res.status).toBe(504);
    expect(res.body.error.code).toBe('generation_timeout');
  });

  it('leaves the queue when its caller goes away', async () => {
    const t = await createTestApp({ media: { workers: 1, queueLimit: 4, jobTimeoutMs: 60_000 } });
    const held = holdSlot(t);
    const server = t.app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const { port } = server.address() as AddressInfo;
      const abandoned = httpRequest({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v1/tools/image_understanding',
        headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      });
      abandoned.on('error', () => {});
      abandoned.end(JSON.stringify({ prompt: 'x', image_url: pngDataUrl }));
      await vi.waitFor(() => expect(t.mediaPool.stats().queued).toBe(1));
      abandoned.destroy();
      await vi.waitFor(() => expect(t.mediaPool.stats().queued).toBe(0));
    } finally {
      held.release();
      await held.done;
      server.close();
    }
  });
});

const KEEPING = '# Lighthouse keeping\n\nThe keeper lights the lamp at dusk and trims the wick at midnight.\n';

async function upload(t: TestApp, key: string, name: string, text: string): Promise<string> {
  const res = await request(t.app)
    .post('/v1/files')
    .set('authorization', `Bearer ${key}`)
    .field('purpose', 'user_data')
    .attach('file', Buffer.from(text), name);
  expect(res.status).toBe(200);
  // The upload answers before its text is indexed.
  await t.searchIndex.idle();
  return res.body.id as string;
}

describe('POST /v1/tools/web_search (local:search over uploaded files)', async () => {
  const t = await createTestApp();
  let fileId: string;
  let otherKey: string;
  beforeAll(async () => {
    fileId = await upload(t, t.key, 'keeping.md', KEEPING);
    otherKey = (await t.keys.create({ name: 'other' })).key;
    await upload(t, otherKey, 'fog.md', '# Fog\n\nThe lighthouse fog horn sounds every thirty seconds.\n');
  });
  const post = (body: unknown, key = t.key) =>
    request(t.app)
      .post('/v1/tools/web_search')
      .set('authorization', `Bearer ${key}`)
      .send(body as object);

  it("answers the contract's tool result: structured results and the same results as numbered text", async () => {
    const res = await post({ query: 'lighthouse keeper', max_results: 5 });
    expect(res.status).toBe(200);
    assertMatchesSchema('WebSearchToolResponse', res.body);
    expect(res.body).toMatchObject({ object: 'tool.result', tool: 'web_search' });
    expect(res.body.id).toMatch(/^tr_/);
    const results = res.body.output.results as Array<{
      title: string;
      url: string;
      snippet: string;
      source: string;
      published_at: string;
    }>;
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ title: 'keeping.md', source: 'local' });
    expect(new URL(results[0].url).pathname).toBe(`/v1/files/${fileId}/content`);
    const lines = (res.body.content as string).split('\n');
    // local:search dates a file by its upload; the text shows the day.
    expect(lines[0]).toBe(`1. keeping.md (${results[0].published_at.slice(0, 10)})`);
    expect(lines[1]).toBe(`   ${results[0].url}`);
    expect(lines[2]).toBe(`   ${results[0].snippet.replace(/\s+/g, ' ').trim()}`);
  });

  it('each key finds only its own files', async () => {
    const mine = await post({ query: 'fog horn' });
    expect(mine.status).toBe(200);
    expect(mine.body.output.results).toEqual([]);
    expect(mine.body.content).toBe('No results.');
    const theirs = await post({ query: 'fog horn' }, otherKey);
    expect(theirs.body.output.results.map((result: { title: string }) => result.title)).toEqual(['fog.md']);
    const theirsForMine = await post({ query: 'keeper wick' }, otherKey);
    expect(theirsForMine.body.output.results).toEqual([]);
  });

  it('takes a search model and refuses an unknown one with a 404, and bad arguments with a 400', async () => {
    expect((await post({ query: 'keeper', model: 'local:search' })).status).toBe(200);
    const unknown = await post({ query: 'keeper', model: 'no-such-search' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.message).toMatch(/no-such-search/);
    for (const body of [
      {},
      { query: '' },
      { query: 'x', max_results: 0 },
      { query: 'x', search_type: 'news' },
      { query: 'x', include_domains: ['not a host'] },
    ]) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toMatchObject({ message: expect.any(String) });
    }
  });

  it('a key limited to local:chat gets 403 model_not_allowed', async () => {
    const { key } = await t.keys.create({ name: 'chat only', allowedModels: ['local:chat'] });
    const res = await post({ query: 'keeper' }, key);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('model_not_allowed');
  });
});

describe('the official openai SDK', () => {
  const context = openAIServer();

  it('posts to /tools/web_search and reads the tool result', async () => {
    const client: OpenAI = context.client;
    const fileId = await upload(context.started.testApp, context.started.key, 'keeping.md', KEEPING);
    const result = await client.post<{
      object: string;
      tool: string;
      output: { results: Array<{ url: string }> };
      content: string;
    }>('/tools/web_search', {
      body: { query: 'wick midnight' },
    });
    expect(result).toMatchObject({ object: 'tool.result', tool: 'web_search' });
    expect(result.output.results.map((item) => item.url)).toEqual([
      `${context.started.baseURL}/v1/files/${fileId}/content`,
    ]);
    expect(result.content).toMatch(/^1\. keeping\.md \(\d{4}-\d{2}-\d{2}\)\n/);
  });

  it('posts to /tools/image_understanding and reads the tool result', async () => {
    const client: OpenAI = context.client;
    const result = await client.post<{ object: string; model: string; content: string; analysis: { width: number } }>(
      '/tools/image_understanding',
      {
        body: { prompt: 'What colours?', image_url: pngDataUrl },
      },
    );
    expect(result).toMatchObject({ object: 'tool.result', model: 'local:vision', analysis: { width: 30 } });
    expect(result.content).toMatch(/mostly white/);
  });
});
