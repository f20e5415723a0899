/**
 * Every route honours every limit that applies to it, table-driven: one row per route (and dialect, JSON or
 * stream, translated or passthrough to a fake upstream), each row run against the limit kinds it is listed
 * for, each run on a fresh key of one app per kind (in-process counters; limits.test.ts covers Redis).
 *
 * - requests: `rpm: 1` admits the first call and refuses the second with a 429 in the route's dialect, with
 *   Retry-After and the `x-ratelimit-*-requests` trio;
 * - tokens: the upstream reports 10 + 1000 tokens while the request reserves far fewer; `tpm: 500` admits the
 *   first call, whose settlement of its real usage refuses the second (a route that did not settle would not);
 * - budget: a call costs $0.00401 at the test's prices; a $0.001 budget admits the first and answers the
 *   second `insufficient_quota` (`billing_error` on /anthropic), not to be retried;
 * - media units: images count images, speech characters (not the seconds of audio), music and video seconds.
 * MCP: every tool call meets the key's limits (an isError result), and a JSON-RPC batch settles each call once.
 */
import type { ServerResponse } from 'node:http';
import type { Express } from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LimitSettings, ProviderConfig } from '../../server/config.js';
import type { Limits } from '../../server/core/limits.js';
import type { LimitsSource } from '../../server/limits/call-limiter.js';
import { sendAnthropicJson, sendAnthropicSse, sendJson, sseHead } from '../fakes/answers.js';
import { startFakeUpstream, type FakeUpstream, type RecordedRequest } from '../fakes/fake-upstream.js';
import { createTestApp, type TestApp } from '../helpers/create-test-app.js';

const INPUT_TOKENS = 10;
const OUTPUT_TOKENS = 1000;
/** $1 per 1M input and $4 per 1M output tokens: 10 + 1000 tokens cost $0.00401. */
const PRICE = { input: 1, output: 4 };

function openAiAnswer(request: RecordedRequest, res: ServerResponse) {
  const usage = { prompt_tokens: INPUT_TOKENS, completion_tokens: OUTPUT_TOKENS, total_tokens: 1010 };
  if ((request.body as { stream?: boolean }).stream) {
    sseHead(res);
    const chunk = (data: object) =>
      `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', ...data })}\n\n`;
    res.end(
      chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: 'ok' }, finish_reason: null }] }) +
        chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }) +
        chunk({ choices: [], usage }) +
        'data: [DONE]\n\n',
    );
    return;
  }
  sendJson(
    res,
    200,
    JSON.stringify({
      id: 'c1',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
      usage,
    }),
  );
}

function anthropicAnswer(request: RecordedRequest, res: ServerResponse) {
  const message = { id: 'msg_1', type: 'message', role: 'assistant', model: 'c' };
  if ((request.body as { stream?: boolean }).stream) {
    const event = (name: string, data: object) =>
      `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;
    return sendAnthropicSse(
      res,
      event('message_start', {
        message: {
          ...message,
          content: [],
          stop_reason: null,
          usage: { input_tokens: INPUT_TOKENS, output_tokens: 1 },
        },
      }) +
        event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }) +
        event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'ok' } }) +
        event('content_block_stop', { index: 0 }) +
        event('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: OUTPUT_TOKENS } }) +
        event('message_stop', {}),
    );
  }
  sendAnthropicJson(
    res,
    200,
    JSON.stringify({
      ...message,
      content: [{ type: 'text', text: 'ok' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: INPUT_TOKENS, output_tokens: OUTPUT_TOKENS },
    }),
  );
}

let upstream: FakeUpstream;
const limitsByKey = new Map<string, Limits>();
const source: LimitsSource = { limitsFor: (key) => ({ key: limitsByKey.get(key.id) ?? {} }) };
let made: TestApp;

beforeAll(async () => {
  upstream = await startFakeUpstream((recorded, res) =>
    recorded.url.startsWith('/v1/messages') ? anthropicAnswer(recorded, res) : openAiAnswer(recorded, res),
  );
  const providers: ProviderConfig[] = [
    {
      id: 'fake',
      type: 'openai-compatible',
      base_url: `${upstream.origin}/v1`,
      timeout_ms: 5000,
      max_connections: 16,
      headers: {},
      responses: 'translate',
    },
    {
      id: 'anth',
      type: 'anthropic',
      base_url: upstream.origin,
      api_key: 'upstream-secret',
      anthropic_version: '2023-06-01',
      timeout_ms: 5000,
      max_connections: 16,
      headers: {},
    } as ProviderConfig,
  ];
  const limits: LimitSettings = { defaults: {}, onStoreDown: 'allow', leaseMs: 60_000, redisUrl: undefined };
  made = await createTestApp({
    providers,
    prices: { 'fake:m': PRICE, 'anth:c': PRICE },
    limits,
    limitsSource: source,
  });
});
afterAll(async () => {
  await made?.services.close();
  await upstream?.close();
});

/** A fresh key of its own limits: each row counts from zero. */
async function keyWith(limits: Limits): Promise<string> {
  const { key, record } = await made.keys.create({ name: 'limited' });
  limitsByKey.set(record.id, limits);
  return key;
}

type Dialect = 'openai' | 'anthropic';
type Kind = 'requests' | 'tokens' | 'budget';

interface Route {
  name: string;
  dialect: Dialect;
  kinds: Kind[];
  call(app: Express, key: string): request.Test;
}

const bearer = (test: request.Test, key: string, dialect: Dialect = 'openai') =>
  dialect === 'anthropic' ? test.set('x-api-key', key) : test.set('authorization', `Bearer ${key}`);
const post =
  (path: string, body: object, dialect: Dialect = 'openai') =>
  (app: Express, key: string) =>
    bearer(request(app).post(path), key, dialect).send(body);
const get = (path: string) => (app: Express, key: string) => bearer(request(app).get(path), key);

const chat = (model: string, stream: boolean) => ({
  model,
  stream,
  max_tokens: 1,
  messages: [{ role: 'user', content: 'Hi' }],
});
const TOKEN_KINDS: Kind[] = ['requests', 'tokens', 'budget'];
const png1x1 =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

const ROUTES: Route[] = [
  ...[false, true].flatMap((stream): Route[] => {
    const form = stream ? 'stream' : 'JSON';
    return [
      {
        name: `chat completions, passthrough, ${form}`,
        dialect: 'openai',
        kinds: TOKEN_KINDS,
        call: post('/v1/chat/completions', chat('fake:m', stream)),
      },
      {
        name: `chat completions, translated to Anthropic, ${form}`,
        dialect: 'openai',
        kinds: TOKEN_KINDS,
        call: post('/v1/chat/completions', chat('anth:c', stream)),
      },
      {
        name: `responses, ${form}`,
        dialect: 'openai',
        kinds: TOKEN_KINDS,
        call: post('/v1/responses', { model: 'fake:m', stream, max_output_tokens: 16, input: 'Hi' }),
      },
      {
        name: `anthropic messages, passthrough, ${form}`,
        dialect: 'anthropic',
        kinds: TOKEN_KINDS,
        call: post('/anthropic/v1/messages', chat('anth:c', stream), 'anthropic'),
      },
      {
        name: `anthropic messages, translated to OpenAI, ${form}`,
        dialect: 'anthropic',
        kinds: TOKEN_KINDS,
        call: post('/anthropic/v1/messages', chat('fake:m', stream), 'anthropic'),
      },
    ];
  }),
  {
    name: 'anthropic count_tokens (requests only)',
    dialect: 'anthropic',
    kinds: ['requests'],
    call: post(
      '/anthropic/v1/messages/count_tokens',
      { model: 'local:chat', messages: [{ role: 'user', content: 'Hi' }] },
      'anthropic',
    ),
  },
  {
    name: 'images',
    dialect: 'openai',
    kinds: ['requests'],
    call: post('/v1/images/generations', {
      model: 'local:image',
      prompt: 'a hill',
      size: '256x256',
      response_format: 'b64_json',
    }),
  },
  {
    name: 'speech',
    dialect: 'openai',
    kinds: ['requests'],
    call: post('/v1/audio/speech', { model: 'local:speech', input: 'Hello.', voice: 'alloy', response_format: 'wav' }),
  },
  {
    name: 'music',
    dialect: 'openai',
    kinds: ['requests'],
    call: post('/v1/music/generations', { prompt: 'calm piano', duration: 1, response_format: 'url' }),
  },
  {
    name: 'videos',
    dialect: 'openai',
    kinds: ['requests'],
    call: post('/v1/videos', { model: 'local:video', prompt: 'waves', seconds: '4', size: '320x240' }),
  },
  {
    name: 'files: upload',
    dialect: 'openai',
    kinds: ['requests'],
    call: (app, key) =>
      bearer(request(app).post('/v1/files'), key)
        .field('purpose', 'assistants')
        .attach('file', Buffer.from('hello'), { filename: 'a.txt', contentType: 'text/plain' }),
  },
  { name: 'files: list', dialect: 'openai', kinds: ['requests'], call: get('/v1/files') },
  { name: 'files: read', dialect: 'openai', kinds: ['requests'], call: get('/v1/files/file-unknown') },
  {
    name: 'files: delete',
    dialect: 'openai',
    kinds: ['requests'],
    call: (app, key) => bearer(request(app).delete('/v1/files/file-unknown'), key),
  },
  {
    name: 'web search',
    dialect: 'openai',
    kinds: ['requests'],
    call: post('/v1/web/search', { model: 'local:search', query: 'lantern' }),
  },
  {
    name: 'search answers',
    dialect: 'openai',
    kinds: ['requests'],
    call: post('/v1/search/answer', { query: 'What is a lantern?' }),
  },
  {
    name: 'REST tool web_search',
    dialect: 'openai',
    kinds: ['requests'],
    call: post('/v1/tools/web_search', { query: 'lantern' }),
  },
  {
    name: 'REST tool image_understanding',
    dialect: 'openai',
    kinds: ['requests'],
    call: post('/v1/tools/image_understanding', { prompt: 'What is it?', image_url: png1x1 }),
  },
  { name: 'models list', dialect: 'openai', kinds: ['requests'], call: get('/v1/models') },
];

const LIMITS: Record<Kind, Limits> = {
  requests: { rpm: 1 },
  tokens: { tpm: 500 },
  budget: { budgetUsd: 0.001, budgetPeriod: 'day' },
};

/** The 429 of `kind` in `dialect`'s envelope, with the headers it must carry. */
function expectRefusal(answer: request.Response, dialect: Dialect, kind: Kind): void {
  expect(answer.status, JSON.stringify(answer.body)).toBe(429);
  if (kind === 'budget') {
    expect(answer.headers['x-should-retry']).toBe('false');
    if (dialect === 'anthropic') {
      expect(answer.body).toMatchObject({ type: 'error', error: { type: 'billing_error' } });
    } else {
      expect(answer.body.error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota' });
    }
    return;
  }
  expect(Number(answer.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  if (dialect === 'anthropic') {
    expect(answer.body).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
  } else {
    expect(answer.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
  }
  const trio = kind === 'requests' ? 'requests' : 'tokens';
  expect(answer.headers[`x-ratelimit-limit-${trio}`]).toBe(kind === 'requests' ? '1' : '500');
  expect(answer.headers[`x-ratelimit-remaining-${trio}`]).toBe('0');
  expect(answer.headers[`x-ratelimit-reset-${trio}`]).toMatch(/^\d+(\.\d+)?m?s$|^\d+m\d+s$/);
}

const cases = ROUTES.flatMap((route) => route.kinds.map((kind) => [route.name, kind, route] as const));

describe('every route honours every limit that applies to it', () => {
  it.each(cases)('%s: %s', async (_name, kind, route) => {
    const key = await keyWith(LIMITS[kind]);
    const first = await route.call(made.app, key);
    expect(first.status, JSON.stringify(first.body)).toBeLessThan(500);
    expect(first.status).not.toBe(429);
    if (kind === 'requests') {
      expect(first.headers['x-ratelimit-limit-requests']).toBe('1');
      expect(first.headers['x-ratelimit-remaining-requests']).toBe('0');
    }
    if (kind === 'tokens') {
      // Admitted on its estimate, well under the minute's 500 tokens.
      expect(Number(first.headers['x-ratelimit-remaining-tokens'])).toBeGreaterThan(300);
    }
    // A stream settles after its last event, and the usage record is written a moment after the answer.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expectRefusal(await route.call(made.app, key), route.dialect, kind);
  });
});

describe('media units per day, each kind counted in its own unit', () => {
  const media = (path: string, body: object) => (key: string) => post(path, body)(made.app, key);
  it.each([
    // [what, limit, first call, second call admitted exactly up to the limit, third refused]
    [
      'images (n)',
      3,
      media('/v1/images/generations', {
        model: 'local:image',
        prompt: 'a',
        size: '256x256',
        n: 2,
        response_format: 'b64_json',
      }),
      media('/v1/images/generations', {
        model: 'local:image',
        prompt: 'a',
        size: '256x256',
        n: 1,
        response_format: 'b64_json',
      }),
    ],
    // 12 characters of a 20-unit day: 8 more fit only if the first counted its characters, not its seconds too.
    [
      'speech (characters)',
      20,
      media('/v1/audio/speech', {
        model: 'local:speech',
        input: 'Hello there.',
        voice: 'alloy',
        response_format: 'wav',
      }),
      media('/v1/audio/speech', { model: 'local:speech', input: 'Goodbye.', voice: 'alloy', response_format: 'wav' }),
    ],
    [
      'music (seconds)',
      3,
      media('/v1/music/generations', { prompt: 'calm piano', duration: 2, response_format: 'url' }),
      media('/v1/music/generations', { prompt: 'calm piano', duration: 1, response_format: 'url' }),
    ],
    [
      'videos (seconds)',
      8,
      media('/v1/videos', { model: 'local:video', prompt: 'waves', seconds: '4', size: '320x240' }),
      media('/v1/videos', { model: 'local:video', prompt: 'waves', seconds: '4', size: '320x240' }),
    ],
  ] as const)('%s', async (_what, limit, first, fill) => {
    const key = await keyWith({ mediaUnitsPerDay: limit });
    expect((await first(key)).status).toBeLessThan(300);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const filled = await fill(key);
    expect(filled.status, JSON.stringify(filled.body)).toBeLessThan(300);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const refused = await fill(key);
    expect(refused.status).toBe(429);
    expect(refused.body.error.message).toMatch(/media units per day/);
  });
});

interface McpResult {
  id?: number;
  result: { isError?: boolean; content: Array<{ text?: string }> };
}

async function mcp(key: string, body: object, version = '2025-11-25'): Promise<McpResult[]> {
  const answer = await request(made.app)
    .post('/v1/mcp')
    .set('authorization', `Bearer ${key}`)
    .set('accept', 'application/json, text/event-stream')
    .set('mcp-protocol-version', version)
    .send(body);
  expect(answer.status, answer.text).toBe(200);
  const messages =
    answer.text.startsWith('[') || answer.text.startsWith('{')
      ? [JSON.parse(answer.text)].flat()
      : [...answer.text.matchAll(/^data: (.+)$/gm)].map((match) => JSON.parse(match[1]!));
  return messages as McpResult[];
}

const toolCall = (name: string, args: object, id = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

const MCP_TOOLS: Array<[string, object]> = [
  ['chat', { prompt: 'Hi', model: 'fake:m', max_tokens: 1 }],
  ['generate_image', { prompt: 'a hill', size: '256x256' }],
  ['text_to_speech', { input: 'Hello.' }],
  ['generate_music', { prompt: 'calm piano', duration: 1 }],
  ['create_video', { prompt: 'waves', seconds: '4' }],
  ['get_video', { id: 'video_unknown' }],
  ['list_files', {}],
  ['read_file', { file_id: 'file-unknown' }],
  ['web_search', { query: 'lantern' }],
  ['search_answer', { query: 'What is a lantern?' }],
  ['image_understanding', { prompt: 'What is it?', image_url: png1x1 }],
  ['embed', { input: 'a lantern' }],
  // No transcription model here: the first call is capability_unavailable, the second still counts as a request.
  ['transcribe_audio', { audio_base64: 'UklGRg==', filename: 'a.wav' }],
];

describe('every MCP tool call meets the limits', () => {
  it('covers every tool of the server', async () => {
    const { TOOLS } = await import('../../server/tools/tool-list.js');
    expect(MCP_TOOLS.map(([name]) => name).sort()).toEqual(TOOLS.map((tool) => tool.name).sort());
  });

  it.each(MCP_TOOLS)(
    '%s: a second call in the minute is an isError result saying when to retry',
    async (name, args) => {
      const key = await keyWith({ rpm: 1 });
      const [first] = await mcp(key, toolCall(name, args));
      expect(first!.result.content[0]?.text ?? '').not.toMatch(/\[429/);
      const [second] = await mcp(key, toolCall(name, args));
      expect(second!.result.isError).toBe(true);
      expect(second!.result.content[0]?.text).toMatch(
        /Rate limit reached.*retry after \d+ seconds.*\[429 rate_limit_exceeded\]/,
      );
    },
  );

  it('a tools/call answered as a stream carries the x-ratelimit-* headers of its call (the head waits for it)', async () => {
    const key = await keyWith({ rpm: 5 });
    const answer = await request(made.app)
      .post('/v1/mcp')
      .set('authorization', `Bearer ${key}`)
      .set('accept', 'application/json, text/event-stream')
      .set('mcp-protocol-version', '2025-11-25')
      .send(toolCall('list_files', {}));
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(answer.headers['x-ratelimit-limit-requests']).toBe('5');
    expect(answer.headers['x-ratelimit-remaining-requests']).toBe('4');
    expect(answer.headers['x-ratelimit-reset-requests']).toMatch(/^\d+(\.\d+)?m?s$|^\d+m\d+s$/);
    // initialize spends nothing and sets none.
    const initialize = await request(made.app)
      .post('/v1/mcp')
      .set('authorization', `Bearer ${key}`)
      .set('accept', 'application/json, text/event-stream')
      .send({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      });
    expect(initialize.status).toBe(200);
    expect(initialize.headers['x-ratelimit-limit-requests']).toBeUndefined();
  });

  it.each([
    ['tokens', { tpm: 500 }, /tokens per minute.*\[429 rate_limit_exceeded\]/],
    ['budget', { budgetUsd: 0.001, budgetPeriod: 'day' as const }, /spend budget.*\[429 insufficient_quota\]/],
  ])('chat settles its real %s', async (_kind, limits, refusal) => {
    const key = await keyWith(limits);
    const [first] = await mcp(key, toolCall('chat', { prompt: 'Hi', model: 'fake:m', max_tokens: 1 }));
    expect(first!.result.isError).toBeFalsy();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const [second] = await mcp(key, toolCall('chat', { prompt: 'Hi', model: 'fake:m', max_tokens: 1 }));
    expect(second!.result.isError).toBe(true);
    expect(second!.result.content[0]?.text).toMatch(refusal);
  });

  it('settles each call of a JSON-RPC batch once, and records their sum', async () => {
    const key = await keyWith({ tpm: 3000, mediaUnitsPerDay: 3, budgetUsd: 1, budgetPeriod: 'day' });
    const answers = await mcp(
      key,
      [
        toolCall('chat', { prompt: 'Hi', model: 'fake:m', max_tokens: 1 }, 1),
        toolCall('generate_image', { prompt: 'a hill', size: '256x256' }, 2),
      ],
      '2025-03-26',
    );
    expect(answers.map((answer) => answer.result.isError ?? false)).toEqual([false, false]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    // One image of three counted: two more fit (a second settlement of the batch's image would refuse them).
    const more = await post('/v1/images/generations', {
      model: 'local:image',
      prompt: 'a',
      size: '256x256',
      n: 2,
      response_format: 'b64_json',
    })(made.app, key);
    expect(more.status, JSON.stringify(more.body)).toBe(200);
    // The chat's 1010 tokens counted once (the bucket drains 50 tokens a second; counted twice it would be 2020).
    const probe = await get('/v1/models')(made.app, key);
    const used = 3000 - Number(probe.headers['x-ratelimit-remaining-tokens']);
    expect(used).toBeGreaterThan(500);
    expect(used).toBeLessThanOrEqual(1010);
    const { data } = (await get('/v1/usage?limit=10')(made.app, key)).body as {
      data: Array<{
        operation: string;
        input_tokens: number;
        output_tokens: number;
        cost_usd: number;
        media?: unknown;
      }>;
    };
    const batch = data.find((record) => record.operation.startsWith('mcpPost'))!;
    expect(batch).toMatchObject({ input_tokens: INPUT_TOKENS, output_tokens: OUTPUT_TOKENS });
    expect(batch.cost_usd).toBeCloseTo(0.00401, 9);
  });
});
