/**
 * Search through HTTP, offline and against a fake upstream chat model: files indexed through the `FileIndex`
 * seam (`deps.search.index`, as file storage calls it) are found by `POST /v1/web/search` on `local:search`,
 * only by their own key; answers cite them with markers that all resolve; streams follow the contract's events.
 */
import type { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IndexableFile } from '../../server/core/file-index.js';
import { sendJson, sseHead } from '../fakes/answers.js';
import { byPath, startFakeUpstream, type FakeUpstream } from '../fakes/fake-upstream.js';
import { expectRequestId, usageOf } from '../helpers/contract-assertions.js';
import { createTestApp, type TestApp } from '../helpers/create-test-app.js';
import { minimalPdf } from '../helpers/minimal-pdf.js';
import { sseJson } from '../helpers/read-sse.js';
import { assertMatchesSchema } from '../helpers/spec-schemas.js';

const MARKDOWN = `# Lighthouse keeping

The keeper lights the lamp at dusk and trims the wick at midnight.

Fog signals sound every thirty seconds when visibility drops below two miles.
`;
const PDF_LINES = [
  'The lighthouse lens was ground in Paris in 1871.',
  'Its beam reaches twenty nautical miles on a clear night.',
];

let t: TestApp;
let upstream: FakeUpstream;
let keyId: string;

function indexable(id: string, filename: string, mediaType: string, bytes: Uint8Array, owner = keyId): IndexableFile {
  return {
    id,
    keyId: owner,
    filename,
    mediaType,
    bytes: bytes.length,
    open: async () => Readable.from([Buffer.from(bytes)]),
  };
}

const post = (path: string, body: unknown, key = t.key) =>
  request(t.app)
    .post(path)
    .set('authorization', `Bearer ${key}`)
    .send(body as object);

/** Every `[n]` resolves to a citation, and every citation is used. */
function expectCitationIntegrity(answer: string, citations: Array<{ index: number }>): void {
  const used = new Set([...answer.matchAll(/\[(\d+)\]/g)].map((match) => Number(match[1])));
  expect(new Set(citations.map((citation) => citation.index))).toEqual(used);
  expect(citations.map((citation) => citation.index)).toEqual(citations.map((_citation, index) => index + 1));
}

const chatCompletion = (content: string) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'writer',
  choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 321, completion_tokens: 12, total_tokens: 333 },
});

function streamedCompletion(pieces: string[]) {
  return (_request: unknown, res: ServerResponse) => {
    sseHead(res);
    for (const piece of pieces) {
      res.write(
        `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'writer', choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] })}\n\n`,
      );
    }
    res.write(
      `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'writer', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 300, completion_tokens: 9, total_tokens: 309 } })}\n\n`,
    );
    res.end('data: [DONE]\n\n');
  };
}

beforeAll(async () => {
  upstream = await startFakeUpstream();
  t = await createTestApp({
    providers: [
      {
        id: 'up',
        type: 'openai-compatible',
        base_url: `${upstream.origin}/v1`,
        timeout_ms: 5_000,
        max_connections: 4,
        headers: {},
        responses: 'translate',
      },
    ],
    models: [{ provider: 'up', model: 'writer', type: 'chat', aliases: [] }],
  });
  keyId = (await t.keys.verify(t.key))!.id;
  await Promise.all([
    t.searchIndex.add(indexable('file_md1', 'keeping.md', 'text/plain', new TextEncoder().encode(MARKDOWN))),
    t.searchIndex.add(indexable('file_pdf1', 'lens-history.pdf', 'application/pdf', minimalPdf(PDF_LINES))),
    t.searchIndex.add(indexable('file_png', 'photo.png', 'image/png', new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 0]))),
  ]);
});

afterAll(async () => {
  await t.searchIndex.close();
  await t.registry.close();
  await upstream.close();
});

describe('POST /v1/web/search on local:search', () => {
  it('finds the Markdown and the PDF, with absolute content links, snippets and source local', async () => {
    const res = await post('/v1/web/search', { query: 'lighthouse lens beam keeper', model: 'local:search' });
    expect(res.status).toBe(200);
    expectRequestId(res);
    assertMatchesSchema('WebSearchResponse', res.body);
    expect(res.body).toMatchObject({
      object: 'web_search.result',
      query: 'lighthouse lens beam keeper',
      provider: 'local',
    });
    const byTitle = new Map(
      (res.body.results as Array<Record<string, unknown>>).map((result) => [result.title, result]),
    );
    expect([...byTitle.keys()].sort()).toEqual(['keeping.md', 'lens-history.pdf']);
    const origin = new URL(byTitle.get('lens-history.pdf')!.url as string);
    expect(origin.pathname).toBe('/v1/files/file_pdf1/content');
    expect(origin.protocol).toBe('http:');
    expect(byTitle.get('lens-history.pdf')).toMatchObject({
      source: 'local',
      snippet: expect.stringContaining('lens'),
    });
    expect(byTitle.get('keeping.md')!.snippet).toMatch(/keeper/i);
  });

  it('is the default search model and honours max_results', async () => {
    const res = await post('/v1/web/search', { query: 'lighthouse', max_results: 1 });
    expect(res.status).toBe(200);
    expect(res.body.results).toHaveLength(1);
  });

  it("never shows one key another key's files", async () => {
    const other = await t.keys.create({ name: 'other' });
    await t.searchIndex.add(
      indexable(
        'file_other',
        'secret-lighthouse.md',
        'text/markdown',
        new TextEncoder().encode('The other lighthouse is private.'),
        other.record.id,
      ),
    );
    const mine = await post('/v1/web/search', { query: 'lighthouse private' });
    expect((mine.body.results as Array<{ title: string }>).map((result) => result.title)).not.toContain(
      'secret-lighthouse.md',
    );
    const theirs = await post('/v1/web/search', { query: 'lighthouse lens keeper' }, other.key);
    expect((theirs.body.results as Array<{ title: string }>).map((result) => result.title)).toEqual([
      'secret-lighthouse.md',
    ]);
  });

  it.each(['"', '*', 'NEAR(', 'AND OR', '-', 'col:', 'title:keeping', '东京 🙂 ✓', 'a" OR 1=1 --', '(((( ))))', '^'])(
    'answers %j with 200, never an FTS5 error',
    async (query) => {
      const res = await post('/v1/web/search', { query });
      expect(res.status).toBe(200);
      assertMatchesSchema('WebSearchResponse', res.body);
    },
  );

  it('drops a deleted file from the results', async () => {
    const other = await t.keys.create({ name: 'deleter' });
    await t.searchIndex.add(
      indexable(
        'file_gone',
        'gone.txt',
        'text/plain',
        new TextEncoder().encode('Ephemeral walrus notes.'),
        other.record.id,
      ),
    );
    expect((await post('/v1/web/search', { query: 'walrus' }, other.key)).body.results).toHaveLength(1);
    await t.searchIndex.remove('file_gone');
    expect((await post('/v1/web/search', { query: 'walrus' }, other.key)).body.results).toHaveLength(0);
  });

  it('counts the query and its results on the usage record', async () => {
    const res = await post('/v1/web/search', { query: 'lighthouse' });
    const [record] = await usageOf(t.app, t.key, res.headers['x-svc-request-id']);
    expect(record).toMatchObject({
      operation: 'webSearch',
      model: 'local:search',
      provider: 'local',
      media: { queries: 1, results: 2 },
    });
  });

  it('refuses a chat model as the search model with 400', async () => {
    const res = await post('/v1/web/search', { query: 'x', model: 'local:chat' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('wrong_model_type');
  });
});

describe('POST /v1/search/answer', () => {
  it('answers from the indexed files with the built-in writer, every sentence cited', async () => {
    const res = await post('/v1/search/answer', {
      query: 'Where was the lighthouse lens ground, and when does the keeper trim the wick?',
    });
    expect(res.status).toBe(200);
    assertMatchesSchema('SearchAnswer', res.body);
    expect(res.body.model).toBe('local:chat');
    const { answer, citations } = res.body as { answer: string; citations: Array<{ index: number; title: string }> };
    const sentences = answer.split(/(?<=[.!?])\s+/);
    expect(sentences.length).toBeGreaterThan(1);
    for (const sentence of sentences) {
      expect(sentence).toMatch(/\[\d+\]/);
    }
    expectCitationIntegrity(answer, citations);
    expect(citations.map((citation) => citation.title).sort()).toEqual(['keeping.md', 'lens-history.pdf']);
    expect(answer).toContain('Paris');
    expect(res.body.usage).toMatchObject({ search_count: 1 });
    expect(res.body.usage.prompt_tokens).toBeGreaterThan(0);
    const [record] = await usageOf(t.app, t.key, res.headers['x-svc-request-id']);
    expect(record).toMatchObject({
      operation: 'createSearchAnswer',
      model: 'local:chat',
      media: { queries: 1, results: 2 },
    });
    expect(record!.output_tokens).toBe(res.body.usage.completion_tokens);
  });

  it('streams the built-in answer as citations, deltas, done', async () => {
    const res = await post('/v1/search/answer', { query: 'lighthouse lens Paris', stream: true })
      .buffer(true)
      .parse((response, callback) => {
        let text = '';
        response.on('data', (piece: Buffer) => (text += piece.toString('utf8')));
        response.on('end', () => callback(null, text));
      });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    const events = sseJson(res.body as string);
    for (const event of events) {
      assertMatchesSchema('SearchAnswerStreamEvent', event.data);
      expect(event.event).toBe(event.data.type);
    }
    expect(events[0]!.event).toBe('answer.citations');
    expect(events.at(-1)!.event).toBe('answer.done');
    const deltas = events
      .filter((event) => event.event === 'answer.delta')
      .map((event) => event.data.delta as string)
      .join('');
    expect(deltas).toBe(events.at(-1)!.data.answer);
    expectCitationIntegrity(deltas, events[0]!.data.citations as Array<{ index: number }>);
  });

  it("renumbers an upstream model's markers by first use and drops the ones pointing nowhere", async () => {
    upstream.handle(
      byPath({
        '/v1/chat/completions': (_request, res) =>
          sendJson(
            res,
            200,
            JSON.stringify(
              chatCompletion('The lens came from Paris [2]. A keeper tends it [1][7]. Fog horns sound [1, 9].'),
            ),
          ),
      }),
    );
    const res = await post('/v1/search/answer', { query: 'lighthouse lens keeper', model: 'up:writer' });
    expect(res.status).toBe(200);
    assertMatchesSchema('SearchAnswer', res.body);
    expect(res.body.answer).toBe('The lens came from Paris [1]. A keeper tends it [2]. Fog horns sound [2].');
    expectCitationIntegrity(res.body.answer, res.body.citations);
    expect(res.body.model).toBe('up:writer');
    expect(res.body.usage).toEqual({ prompt_tokens: 321, completion_tokens: 12, total_tokens: 333, search_count: 1 });
    // The model was given the numbered sources.
    const prompt = JSON.stringify((upstream.requests.at(-1)!.body as { messages: unknown }).messages);
    expect(prompt).toContain('[1] ');
    expect(prompt).toContain('[2] ');
    const titles = (res.body.citations as Array<{ title: string }>).map((citation) => citation.title);
    expect(prompt.indexOf(`] ${titles[0]}`)).toBeGreaterThan(prompt.indexOf(`] ${titles[1]}`));
  });

  it('streams an upstream answer with markers to no source removed, even when split across deltas', async () => {
    upstream.handle(
      byPath({
        '/v1/chat/completions': streamedCompletion([
          'The lens is French [',
          '1]. Nothing else [',
          '8',
          '] matters [2].',
        ]),
      }),
    );
    const res = await post('/v1/search/answer', { query: 'lighthouse lens keeper', model: 'up:writer', stream: true })
      .buffer(true)
      .parse((response, callback) => {
        let text = '';
        response.on('data', (piece: Buffer) => (text += piece.toString('utf8')));
        response.on('end', () => callback(null, text));
      });
    const events = sseJson(res.body as string);
    events.forEach((event) => assertMatchesSchema('SearchAnswerStreamEvent', event.data));
    const done = events.at(-1)!.data;
    expect(done).toMatchObject({
      type: 'answer.done',
      answer: 'The lens is French [1]. Nothing else matters [2].',
      usage: { prompt_tokens: 300, completion_tokens: 9, total_tokens: 309, search_count: 1 },
    });
    const listed = new Set((events[0]!.data.citations as Array<{ index: number }>).map((citation) => citation.index));
    for (const match of (done.answer as string).matchAll(/\[(\d+)\]/g)) {
      expect(listed.has(Number(match[1]))).toBe(true);
    }
  });

  it('answers 404 for an unknown answer model without searching', async () => {
    const res = await post('/v1/search/answer', { query: 'lighthouse', model: 'nope' });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('model_not_found');
  });

  it('maps an upstream rate limit to 429 with Retry-After', async () => {
    upstream.handle(
      byPath({
        '/v1/chat/completions': (_request, res) =>
          sendJson(res, 429, JSON.stringify({ error: { message: 'slow down' } }), { 'retry-after': '3' }),
      }),
    );
    const res = await post('/v1/search/answer', { query: 'lighthouse', model: 'up:writer' });
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('3');
  });
});
