/**
 * Conformance: the OFFICIAL `openai` SDK's `embeddings.create` against a real Omnigate server, on the built-in
 * lexical `local:embed` and on an OpenAI-compatible fake upstream that records what it received; `POST
 * /v1/rerank` on both; the 400s of bad input; the usage record and the token limit of an embeddings call.
 */
import OpenAI, { BadRequestError } from 'openai';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProviderConfig } from '../../server/config.js';
import { sendJson } from '../fakes/answers.js';
import { byPath, startFakeUpstream, type FakeUpstream } from '../fakes/fake-upstream.js';
import { expectRequestId, usageOf } from '../helpers/contract-assertions.js';
import { createTestApp } from '../helpers/create-test-app.js';
import { assertMatchesSchema } from '../helpers/spec-schemas.js';
import { startServer, type StartedServer } from './start-server.js';

let upstream: FakeUpstream;
let started: StartedServer;
let client: OpenAI;
const UPSTREAM_VECTORS = [
  [0.1, -0.2, 0.30000001192092896],
  [1.5, 0, -0.25],
];

function provider(origin: string): ProviderConfig {
  return {
    id: 'fake',
    type: 'openai-compatible',
    base_url: `${origin}/v1`,
    timeout_ms: 5000,
    max_connections: 4,
    headers: {},
    responses: 'translate',
  };
}

/** The fake's embeddings answer, in the encoding asked for (base64 as OpenAI writes it: little-endian float32). */
function upstreamEmbeddings(body: { input: unknown; encoding_format?: string }, promptTokens = 7): string {
  const count = Array.isArray(body.input) && typeof body.input[0] !== 'number' ? body.input.length : 1;
  const data = UPSTREAM_VECTORS.slice(0, count).map((vector, index) => ({
    object: 'embedding',
    index,
    embedding:
      body.encoding_format === 'base64' ? Buffer.from(Float32Array.from(vector).buffer).toString('base64') : vector,
  }));
  // Reversed: the answer is put back in input order by `index`.
  return JSON.stringify({
    object: 'list',
    data: data.reverse(),
    model: 'embed-large-v9',
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  });
}

beforeAll(async () => {
  upstream = await startFakeUpstream(
    byPath({
      '/v1/embeddings': (recorded, res) => sendJson(res, 200, upstreamEmbeddings(recorded.body as never)),
      '/v1/rerank': (_recorded, res) =>
        sendJson(
          res,
          200,
          JSON.stringify({
            results: [
              { index: 2, relevance_score: 0.9 },
              { index: 0, relevance_score: 0.4 },
              { index: 1, relevance_score: 0.1 },
            ],
            usage: { total_tokens: 42 },
          }),
        ),
    }),
  );
  started = await startServer({
    providers: [provider(upstream.origin)],
    models: [
      { provider: 'fake', model: 'embed-large-v9', type: 'embedding', aliases: ['big-embed'] },
      { provider: 'fake', model: 'rerank-v9', type: 'rerank', aliases: [] },
    ],
  });
  client = new OpenAI({ apiKey: started.key, baseURL: `${started.baseURL}/v1`, maxRetries: 0 });
});

afterAll(async () => {
  await started.close();
  await upstream.close();
});

const norm = (vector: number[]) => Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
const cosine = (a: number[], b: number[]) =>
  a.reduce((sum, value, index) => sum + value * b[index]!, 0) / (norm(a) * norm(b));

describe('embeddings.create on local:embed', () => {
  it('float and base64 (the SDK default, decoded by the SDK) give the same vectors, unit norm, 256 dimensions', async () => {
    const input = ['The lighthouse keeper trims the wick.', 'Ships pass the reef at noon.'];
    const floats = await client.embeddings.create({ model: 'local:embed', input, encoding_format: 'float' });
    const decoded = await client.embeddings.create({ model: 'local:embed', input });
    expect(floats.model).toBe('local:embed');
    expect(floats.data.map((item) => item.index)).toEqual([0, 1]);
    expect(decoded.data.map((item) => item.embedding)).toEqual(floats.data.map((item) => item.embedding));
    for (const item of floats.data) {
      expect(item.embedding).toHaveLength(256);
      expect(norm(item.embedding)).toBeCloseTo(1, 5);
    }
    expect(floats.usage.prompt_tokens).toBeGreaterThan(10);
    expect(floats.usage.total_tokens).toBe(floats.usage.prompt_tokens);
  });

  it('the raw base64 is little-endian float32 of the float answer', async () => {
    const res = await request(started.testApp.app)
      .post('/v1/embeddings')
      .set('authorization', `Bearer ${started.key}`)
      .send({ model: 'local:embed', input: 'hello world', encoding_format: 'base64', dimensions: 8 });
    expect(res.status).toBe(200);
    assertMatchesSchema('EmbeddingList', res.body);
    const bytes = Buffer.from(res.body.data[0].embedding, 'base64');
    expect(bytes.length).toBe(32);
    const floats = await client.embeddings.create({
      model: 'local:embed',
      input: 'hello world',
      dimensions: 8,
      encoding_format: 'float',
    });
    expect(Array.from({ length: 8 }, (_, i) => bytes.readFloatLE(i * 4))).toEqual(floats.data[0]!.embedding);
  });

  it('is deterministic, and texts sharing words are closer than unrelated ones', async () => {
    const texts = [
      'How do I reset my password?',
      'Resetting your password: open settings and choose reset password.',
      'The weather in Lisbon is sunny and warm today.',
    ];
    const first = await client.embeddings.create({ model: 'local:embed', input: texts, encoding_format: 'float' });
    const again = await client.embeddings.create({ model: 'local-embed', input: texts, encoding_format: 'float' });
    expect(again.data.map((item) => item.embedding)).toEqual(first.data.map((item) => item.embedding));
    const [query, related, unrelated] = first.data.map((item) => item.embedding) as [number[], number[], number[]];
    expect(cosine(query, related)).toBeGreaterThan(cosine(query, unrelated) + 0.2);
  });

  it('embeds token arrays', async () => {
    const result = await client.embeddings.create({
      model: 'local:embed',
      input: [
        [1, 2, 3],
        [3, 2, 1],
      ],
      encoding_format: 'float',
    });
    expect(result.data).toHaveLength(2);
    expect(result.usage.prompt_tokens).toBe(6);
    expect(result.data[0]!.embedding).not.toEqual(result.data[1]!.embedding);
  });

  it.each([
    ['an empty string', { input: '' }, 'input'],
    ['an empty array', { input: [] }, 'input'],
    ['an empty string in an array', { input: ['a', ''] }, 'input'],
    ['more than 2048 inputs', { input: Array.from({ length: 2049 }, () => 'x') }, 'input'],
    ['too many dimensions for local:embed', { input: 'x', dimensions: 2000 }, 'dimensions'],
    ['an unknown encoding', { input: 'x', encoding_format: 'hex' }, 'encoding_format'],
  ])('%s is a 400 naming the parameter', async (_name, fields, param) => {
    const res = await request(started.testApp.app)
      .post('/v1/embeddings')
      .set('authorization', `Bearer ${started.key}`)
      .send({ model: 'local:embed', ...fields });
    expect(res.status).toBe(400);
    assertMatchesSchema('ErrorResponse', res.body);
    expect(String(res.body.error.param)).toMatch(new RegExp(`^${param}`));
  });

  it('an input over 8192 tokens is a 400 naming it', async () => {
    const error = await client.embeddings
      .create({ model: 'local:embed', input: ['short', 'word '.repeat(9000)], encoding_format: 'float' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).param).toBe('input.1');
  });

  it('a chat model is the wrong type', async () => {
    const error = await client.embeddings
      .create({ model: 'local:chat', input: 'x' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).code).toBe('wrong_model_type');
  });

  it('lists local:embed as an embedding model', async () => {
    const models = await client.models.list();
    expect(models.data.find((model) => model.id === 'local:embed')).toMatchObject({ type: 'embedding' });
    expect(models.data.find((model) => model.id === 'fake:rerank-v9')).toMatchObject({ type: 'rerank' });
  });

  it('writes a usage record with the prompt tokens', async () => {
    const res = await request(started.testApp.app)
      .post('/v1/embeddings')
      .set('authorization', `Bearer ${started.key}`)
      .send({ model: 'local:embed', input: ['one two three', 'four five'], encoding_format: 'float' });
    expect(res.status).toBe(200);
    const [record] = await usageOf(started.testApp.app, started.key, expectRequestId(res));
    expect(record).toMatchObject({
      operation: 'createEmbedding',
      model: 'local:embed',
      provider: 'local',
      input_tokens: res.body.usage.prompt_tokens,
      output_tokens: 0,
    });
  });
});

describe('embeddings.create on an upstream', () => {
  it('passes the request through (model renamed, shape, encoding, dimensions, unknown fields) and decodes base64 exactly', async () => {
    const before = upstream.requests.length;
    const result = await client.embeddings.create({
      model: 'big-embed',
      input: ['alpha', 'beta'],
      dimensions: 3,
      user: 'u-1',
      // A provider's own field (NVIDIA, Cohere-compatible servers): passed on untouched.
      input_type: 'query',
    } as never);
    const sent = upstream.requests.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.url).toBe('/v1/embeddings');
    expect(sent[0]!.body).toEqual({
      model: 'embed-large-v9',
      input: ['alpha', 'beta'],
      encoding_format: 'base64',
      dimensions: 3,
      user: 'u-1',
      input_type: 'query',
    });
    expect(result.model).toBe('fake:embed-large-v9');
    expect(result.data.map((item) => item.embedding)).toEqual(
      UPSTREAM_VECTORS.map((v) => Array.from(Float32Array.from(v))),
    );
    expect(result.usage).toEqual({ prompt_tokens: 7, total_tokens: 7 });
  });

  it('float answers keep the upstream numbers; one string stays one string', async () => {
    const before = upstream.requests.length;
    const result = await client.embeddings.create({ model: 'big-embed', input: 'alpha', encoding_format: 'float' });
    expect(upstream.requests[before]!.body).toMatchObject({ input: 'alpha', encoding_format: 'float' });
    expect(result.data[0]!.embedding).toEqual(UPSTREAM_VECTORS[0]);
  });
});

describe('POST /v1/rerank', () => {
  const rerank = (body: object) =>
    request(started.testApp.app).post('/v1/rerank').set('authorization', `Bearer ${started.key}`).send(body);

  it('ranks by cosine on local:embed: the document sharing the query words first', async () => {
    const res = await rerank({
      model: 'local:embed',
      query: 'reset my password',
      documents: [
        'Our office is closed on public holidays.',
        { text: 'To reset your password, open Settings and choose Reset password.' },
        'Lighthouses guide ships past the reef.',
      ],
      top_n: 2,
      return_documents: true,
    });
    expect(res.status).toBe(200);
    assertMatchesSchema('RerankResponse', res.body);
    expect(res.body.model).toBe('local:embed');
    expect(res.body.results).toHaveLength(2);
    expect(res.body.results[0]).toMatchObject({
      index: 1,
      document: { text: 'To reset your password, open Settings and choose Reset password.' },
    });
    expect(res.body.results[0].relevance_score).toBeGreaterThan(res.body.results[1].relevance_score);
    expect(res.body.usage.prompt_tokens).toBeGreaterThan(0);
  });

  it("forwards to the upstream's /rerank and keeps its order and tokens", async () => {
    const before = upstream.requests.length;
    const res = await rerank({ model: 'fake:rerank-v9', query: 'q', documents: ['a', { text: 'b' }, 'c'], top_n: 2 });
    expect(res.status).toBe(200);
    assertMatchesSchema('RerankResponse', res.body);
    expect(upstream.requests[before]).toMatchObject({
      url: '/v1/rerank',
      body: { model: 'rerank-v9', query: 'q', documents: ['a', 'b', 'c'], top_n: 2, return_documents: false },
    });
    expect(res.body.results).toEqual([
      { index: 2, relevance_score: 0.9 },
      { index: 0, relevance_score: 0.4 },
    ]);
    expect(res.body.usage).toEqual({ prompt_tokens: 42, total_tokens: 42 });
  });

  it.each([
    ['no documents', { query: 'q', documents: [] }, 'documents'],
    ['an empty query', { query: '', documents: ['a'] }, 'query'],
    ['an empty document', { query: 'q', documents: ['a', { text: '' }] }, 'documents'],
  ])('%s is a 400 naming the parameter', async (_name, fields, param) => {
    const res = await rerank({ model: 'local:embed', ...fields });
    expect(res.status).toBe(400);
    expect(String(res.body.error.param)).toMatch(new RegExp(`^${param}`));
  });

  it('a chat model is the wrong type', async () => {
    const res = await rerank({ model: 'local:chat', query: 'q', documents: ['a'] });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('wrong_model_type');
  });
});

describe('limits', () => {
  it("an embeddings call's tokens count against the key's tokens per minute", async () => {
    const limited = await startFakeUpstream(
      byPath({
        '/v1/embeddings': (recorded, res) => sendJson(res, 200, upstreamEmbeddings(recorded.body as never, 900)),
      }),
    );
    const app = await createTestApp({
      providers: [provider(limited.origin)],
      models: [{ provider: 'fake', model: 'embed-large-v9', type: 'embedding', aliases: [] }],
      limits: { defaults: {}, onStoreDown: 'allow', leaseMs: 60_000 },
      limitsSource: { limitsFor: () => ({ key: { tpm: 1000 } }) },
    });
    try {
      const call = () =>
        request(app.app)
          .post('/v1/embeddings')
          .set('authorization', `Bearer ${app.key}`)
          // About 1,650 bytes: an estimate of about 415 tokens, which fits an empty minute but not what is left
          // after 900 settled (the bucket drains ~17 tokens a second, so a slow machine has ~20 s of margin).
          .send({ model: 'fake:embed-large-v9', input: 'alpha beta gamma delta '.repeat(70) });
      expect((await call()).status).toBe(200);
      // The first call settled at the upstream's 900 tokens: the next one's estimate no longer fits the minute
      // (unsettled, two estimates of ~415 would both fit).
      let refused: request.Response | undefined;
      for (let attempt = 0; attempt < 20 && !refused; attempt++) {
        const next = await call();
        if (next.status === 429) {
          refused = next;
        } else {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
      expect(refused?.body.error.code).toBe('rate_limit_exceeded');
    } finally {
      await app.services.close();
      await limited.close();
    }
  });
});
