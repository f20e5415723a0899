/**
 * Semantic file search (issue 34): with `search.embedding_model` set to a fake upstream embedding model that maps
 * a synonym pair to one concept, an uploaded file is found by a query sharing no word with it — full text alone
 * finds nothing — and the passages' vectors were made in the background (the upstream saw them).
 */
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LimitSettings, ProviderConfig } from '../../server/config.js';
import type { Limits } from '../../server/core/limits.js';
import type { LimitsSource } from '../../server/limits/call-limiter.js';
import { sendJson } from '../fakes/answers.js';
import { byPath, startFakeUpstream, type FakeUpstream } from '../fakes/fake-upstream.js';
import { createTestApp, type TestApp } from '../helpers/create-test-app.js';

/** The fake model's concepts: each word of a group lights the same dimension. */
const CONCEPTS = [
  ['car', 'automobile', 'vehicle'],
  ['garage', 'parked'],
  ['bread', 'sourdough', 'bake'],
  ['ocean', 'sea', 'tide'],
];

function conceptVector(text: string): number[] {
  const words = text.toLowerCase().match(/[a-z]+/g) ?? [];
  const vector = CONCEPTS.map((group) => words.filter((word) => group.includes(word)).length);
  // A small constant dimension: a text with no concept is still a vector, unrelated to every concept.
  return [...vector, 0.01];
}

let upstream: FakeUpstream;
let t: TestApp;
const limitsByKey = new Map<string, Limits>();
const source: LimitsSource = { limitsFor: (key) => ({ key: limitsByKey.get(key.id) ?? {} }) };
const limits: LimitSettings = { defaults: {}, onStoreDown: 'allow', leaseMs: 60_000, redisUrl: undefined };
const auth = () => ({ authorization: `Bearer ${t.key}` });

beforeAll(async () => {
  upstream = await startFakeUpstream(
    byPath({
      '/v1/embeddings': (recorded, res) => {
        const { input } = recorded.body as { input: string[] };
        sendJson(
          res,
          200,
          JSON.stringify({
            object: 'list',
            data: input.map((text, index) => ({ object: 'embedding', index, embedding: conceptVector(text) })),
            model: 'concepts',
            usage: { prompt_tokens: input.length, total_tokens: input.length },
          }),
        );
      },
    }),
  );
  const provider: ProviderConfig = {
    id: 'fake',
    type: 'openai-compatible',
    base_url: `${upstream.origin}/v1`,
    timeout_ms: 5000,
    max_connections: 4,
    headers: {},
    responses: 'translate',
  };
  t = await createTestApp({
    providers: [provider],
    models: [{ provider: 'fake', model: 'concepts', type: 'embedding', aliases: ['concepts'] }],
    searchEmbeddingModel: 'concepts',
    // A dollar a token: one passage embedded in the background spends a budget of $0.5.
    prices: { 'fake:concepts': { input: 1_000_000, output: 0 } },
    limits,
    limitsSource: source,
  });
});

afterAll(async () => {
  await t.services.close();
  await upstream.close();
});

async function upload(name: string, text: string, key = t.key): Promise<string> {
  const res = await request(t.app)
    .post('/v1/files')
    .set({ authorization: `Bearer ${key}` })
    .field('purpose', 'user_data')
    .attach('file', Buffer.from(text), name);
  expect(res.status).toBe(200);
  return res.body.id;
}

describe('hybrid search with an embedding model', () => {
  it('finds a passage that shares no word with the query, and still ranks full-text matches', async () => {
    await upload('garage-notes.txt', 'The automobile is parked in the garage overnight.');
    await upload('baking.txt', 'Feed the sourdough starter before you bake bread.');
    await t.searchIndex.idle();
    const embedded = upstream.requests.filter((sent) => sent.url === '/v1/embeddings');
    expect(embedded.length).toBeGreaterThan(0);
    expect(JSON.stringify(embedded.map((sent) => sent.body))).toContain('automobile');

    // "car" is no word of any file: full text finds nothing, the vectors find the automobile.
    const semantic = await request(t.app)
      .post('/v1/web/search')
      .set(auth())
      .send({ model: 'local:search', query: 'car' });
    expect(semantic.status).toBe(200);
    expect(semantic.body.results[0]?.title).toBe('garage-notes.txt');

    // A word both lists rank first wins.
    const both = await request(t.app)
      .post('/v1/web/search')
      .set(auth())
      .send({ model: 'local:search', query: 'bread' });
    expect(both.body.results[0]?.title).toBe('baking.txt');
  });

  it("records the background embedding of a file's passages as its owner's usage, counted by its budget", async () => {
    const { key, record } = await t.keys.create({ name: 'budgeted' });
    limitsByKey.set(record.id, { budgetUsd: 0.5, budgetPeriod: 'total' });
    const before = upstream.requests.filter((sent) => sent.url === '/v1/embeddings').length;
    await upload('tides.txt', 'The tide leaves the sea at dawn.', key);
    await t.searchIndex.idle();
    await t.services.usage.flush();
    expect(upstream.requests.filter((sent) => sent.url === '/v1/embeddings').length).toBe(before + 1);

    const usage = await request(t.app)
      .get('/v1/usage')
      .set({ authorization: `Bearer ${key}` });
    expect(usage.status).toBe(200);
    const embedded = usage.body.data.filter((row: { operation: string }) => row.operation === 'embedFilePassages');
    // The fake upstream counts a token per input: the file's one passage, at $1 a token.
    expect(embedded).toEqual([
      expect.objectContaining({
        model: 'fake:concepts',
        model_requested: 'concepts',
        provider: 'fake',
        input_tokens: 1,
        output_tokens: 0,
        status: 200,
      }),
    ]);
    // The other key's uploads are not this key's usage.
    const others = await request(t.app).get('/v1/usage').set(auth());
    expect(
      others.body.data.filter((row: { operation: string }) => row.operation === 'embedFilePassages').length,
    ).toBeGreaterThan(0);
    expect(JSON.stringify(others.body.data)).not.toContain(embedded[0].request_id);

    // The key's budget counted it: its next spending call is refused.
    await expect
      .poll(async () => {
        const res = await request(t.app)
          .post('/v1/embeddings')
          .set({ authorization: `Bearer ${key}` })
          .send({ model: 'concepts', input: 'sea' });
        return res.body.error?.code ?? res.status;
      })
      .toBe('insufficient_quota');
  });

  it('is a configuration error when the model is no embedding model', async () => {
    await expect(createTestApp({ searchEmbeddingModel: 'local:chat' })).rejects.toThrow(/search\.embedding_model/);
  });
});
