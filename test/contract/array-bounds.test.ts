/**
 * Array bounds (issue 28): every array a caller controls has a `maxItems` in the contract, one over it is a 400 in
 * the dialect's envelope naming the field, and a body too costly to parse (400,000 messages, 3,000,000 stop
 * sequences) is refused while it arrives, before JSON.parse holds the event loop.
 */
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJsonTokenCounter, MAX_JSON_TOKENS } from '../../server/http/json-token-budget.js';
import { loadSpec } from '../../server/spec/load-spec.js';
import { createTestApp, type TestApp } from '../helpers/create-test-app.js';
import { leastOfThree } from '../helpers/loop-block.js';
import { postRaw } from '../helpers/post-raw.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ maxBodyBytes: 25 * 1024 * 1024 });
});

/** The contract's `maxItems` of a request schema's array property (the spec is the source of truth). */
function maxItems(schema: string, property: string): number {
  const schemas = loadSpec().document.components!.schemas as Record<string, any>;
  const array = schemas[schema].properties[property];
  return (array.maxItems ?? array.oneOf.find((branch: any) => branch.type === 'array').maxItems) as number;
}

const MESSAGES_LIMIT = 10_000;
// The bounds the largest accepted bodies are built at, read from the contract.
const chatMessagesBound = maxItems('ChatCompletionRequest', 'messages');
const responsesInputBound = maxItems('ResponseCreateRequest', 'input');
const anthropicMessagesBound = maxItems('AnthropicMessageCreateRequest', 'messages');
const countTokensMessagesBound = maxItems('AnthropicCountTokensRequest', 'messages');
const user = { role: 'user', content: 'hi' };
// String content keeps 10,001 messages within the JSON token budget, so the contract's bound is what answers.
const anthropicUser = { role: 'user', content: 'hi' };

function post(path: string, body: unknown) {
  const raw = typeof body === 'string' ? body : JSON.stringify(body);
  return request(t.app)
    .post(path)
    .set('authorization', `Bearer ${t.key}`)
    .set('content-type', 'application/json')
    .send(raw);
}

function expectOpenAiRefusal(res: request.Response, param: string, message: RegExp): void {
  expect(res.status, JSON.stringify(res.body).slice(0, 500)).toBe(400);
  expect(res.headers['x-request-id']).toMatch(/^req_/);
  expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param });
  expect(res.body.error.message).toMatch(message);
}

/**
 * An array inside a `oneOf` (a message's content parts): the validator names the item it could not match, so
 * the refusal names the message (`messages.0…`), not always the bound.
 */
function expectNestedRefusal(res: request.Response, paramPrefix: string): void {
  expect(res.status, JSON.stringify(res.body).slice(0, 500)).toBe(400);
  expect(res.headers['x-request-id']).toMatch(/^req_/);
  const error = res.body.error;
  // OpenAI envelope: `param`; Anthropic envelope: the field is in the message.
  expect(error.param ?? error.message).toContain(paramPrefix);
}

function expectAnthropicRefusal(res: request.Response, field: string, message: RegExp): void {
  expect(res.status, JSON.stringify(res.body).slice(0, 500)).toBe(400);
  expect(res.headers['x-request-id']).toMatch(/^req_/);
  expect(res.body).toMatchObject({
    type: 'error',
    error: { type: 'invalid_request_error' },
    request_id: res.headers['x-request-id'],
  });
  expect(res.body.error.message).toContain(field);
  expect(res.body.error.message).toMatch(message);
}

const overItems = /must NOT have more than/;

describe('one item over the contract bound is a 400 naming the field, in every dialect', () => {
  it('chat completions: messages', async () => {
    const res = await post('/v1/chat/completions', {
      model: 'local:chat',
      messages: Array(MESSAGES_LIMIT + 1).fill(user),
    });
    expectOpenAiRefusal(res, 'messages', overItems);
  });

  it('chat completions: the bound is checked before the items (10,001 invalid messages name the count, not an item)', async () => {
    const res = await post('/v1/chat/completions', {
      model: 'local:chat',
      messages: Array(MESSAGES_LIMIT + 1).fill({}),
    });
    expectOpenAiRefusal(res, 'messages', overItems);
  });

  it('chat completions: tools, content parts, stop', async () => {
    const tool = { type: 'function', function: { name: 'f', parameters: { type: 'object' } } };
    expectOpenAiRefusal(
      await post('/v1/chat/completions', { model: 'local:chat', messages: [user], tools: Array(513).fill(tool) }),
      'tools',
      overItems,
    );
    const parts = Array(1001).fill({ type: 'text', text: 'x' });
    expectNestedRefusal(
      await post('/v1/chat/completions', { model: 'local:chat', messages: [{ role: 'user', content: parts }] }),
      'messages.0',
    );
    expectOpenAiRefusal(
      await post('/v1/chat/completions', { model: 'local:chat', messages: [user], stop: ['a', 'b', 'c', 'd', 'e'] }),
      'stop',
      overItems,
    );
  });

  it('Responses: input items and content parts', async () => {
    expectOpenAiRefusal(
      await post('/v1/responses', { model: 'local:chat', input: Array(MESSAGES_LIMIT + 1).fill(user) }),
      'input',
      overItems,
    );
    const parts = Array(1001).fill({ type: 'input_text', text: 'x' });
    expectNestedRefusal(
      await post('/v1/responses', { model: 'local:chat', input: [{ role: 'user', content: parts }] }),
      'input',
    );
  });

  it('Anthropic Messages: messages, stop_sequences, tools, content blocks', async () => {
    const base = { model: 'local:chat', max_tokens: 16 };
    expectAnthropicRefusal(
      await post('/anthropic/v1/messages', { ...base, messages: Array(MESSAGES_LIMIT + 1).fill(anthropicUser) }),
      'messages',
      overItems,
    );
    expectAnthropicRefusal(
      await post('/anthropic/v1/messages', {
        ...base,
        messages: [anthropicUser],
        stop_sequences: Array(257).fill('x'),
      }),
      'stop_sequences',
      overItems,
    );
    const tool = { name: 'f', input_schema: { type: 'object' } };
    expectAnthropicRefusal(
      await post('/anthropic/v1/messages', { ...base, messages: [anthropicUser], tools: Array(513).fill(tool) }),
      'tools',
      overItems,
    );
    const blocks = Array(1001).fill({ type: 'text', text: 'x' });
    expectNestedRefusal(
      await post('/anthropic/v1/messages', { ...base, messages: [{ role: 'user', content: blocks }] }),
      'messages/0',
    );
  });

  it('Anthropic count_tokens: messages and tools', async () => {
    expectAnthropicRefusal(
      await post('/anthropic/v1/messages/count_tokens', {
        model: 'local:chat',
        messages: Array(MESSAGES_LIMIT + 1).fill(anthropicUser),
      }),
      'messages',
      overItems,
    );
    const tool = { name: 'f', input_schema: { type: 'object' } };
    expectAnthropicRefusal(
      await post('/anthropic/v1/messages/count_tokens', {
        model: 'local:chat',
        messages: [anthropicUser],
        tools: Array(513).fill(tool),
      }),
      'tools',
      overItems,
    );
  });

  it('search and the REST tools: domain lists', async () => {
    const domains = Array.from({ length: 21 }, (_, index) => `d${index}.example`);
    expectOpenAiRefusal(
      await post('/v1/web/search', { query: 'q', include_domains: domains }),
      'include_domains',
      overItems,
    );
    expectOpenAiRefusal(
      await post('/v1/tools/web_search', { query: 'q', include_domains: domains }),
      'include_domains',
      overItems,
    );
  });

  it('MCP: a JSON-RPC batch of 101 messages is a 400 in the JSON-RPC envelope', async () => {
    const message = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const res = await post('/v1/mcp', Array(101).fill(message)).set('accept', 'application/json, text/event-stream');
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.headers['x-request-id']).toMatch(/^req_/);
    expect(res.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });
    expect(res.body.error.message).toMatch(/at most 100 messages/);
  });

  it('a body at the bounds is served: 10,000 messages', async () => {
    const res = await post('/v1/chat/completions', { model: 'local:chat', messages: Array(MESSAGES_LIMIT).fill(user) });
    expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
  });

  it('10,000 messages of the shape Claude Code sends, with 24 tools, fit the JSON token budget and are served', async () => {
    const assistant = {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Reading it.' },
        { type: 'tool_use', id: 'toolu_01', name: 'Read', input: { file_path: '/w/a.ts' } },
      ],
    };
    const toolResult = {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_01', content: '1\tx', cache_control: { type: 'ephemeral' } },
      ],
    };
    const properties = Object.fromEntries(
      Array.from({ length: 6 }, (_, index) => [`p${index}`, { type: 'string', description: 'x' }]),
    );
    const tool = {
      name: 'Bash',
      description: 'Runs a command.',
      input_schema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        additionalProperties: false,
        required: ['p0'],
        properties,
      },
    };
    const body = {
      model: 'local:chat',
      max_tokens: 16,
      system: [{ type: 'text', text: 'You are Claude Code.', cache_control: { type: 'ephemeral' } }],
      messages: Array.from({ length: MESSAGES_LIMIT }, (_, index) => (index % 2 === 0 ? toolResult : assistant)),
      tools: Array(24).fill(tool),
    };
    const counter = createJsonTokenCounter(Number.MAX_SAFE_INTEGER);
    counter.write(Buffer.from(JSON.stringify(body)));
    const res = await post('/anthropic/v1/messages', body);
    expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
    expect(counter.count).toBeGreaterThan(MAX_JSON_TOKENS * 0.8);
  });
});

describe('a body too costly to parse is refused before it is parsed', () => {
  let baseUrl: { port: number };
  let server: ReturnType<TestApp['app']['listen']>;

  beforeAll(async () => {
    server = t.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    baseUrl = { port: (server.address() as AddressInfo).port };
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** The control: JSON.parse of `body` alone, on the event loop, as the least of three. */
  const parseBlock = (body: Buffer) =>
    leastOfThree(() => new Promise((resolve) => setTimeout(() => resolve(JSON.parse(body.toString('utf8'))), 5)));

  const send = (path: string, body: Buffer) => postRaw({ port: baseUrl.port, key: t.key }, path, body);

  // The control is what the server did before the budget: parse the whole body on the event loop (and then
  // validate and serve it). The refusal must cost a small part of the parse alone.
  /** `n` copies of `item` as a JSON array, built as text: no test-side objects for the collector to chase. */
  const repeated = (item: string, n: number) => `[${`${item},`.repeat(n - 1)}${item}]`;
  const chatUser = '{"role":"user","content":"hi"}';
  it.each([
    [
      '400,000 chat messages (12.4 MB)',
      '/v1/chat/completions',
      () => `{"model":"local:chat","messages":${repeated(chatUser, 400_000)}}`,
      'openai',
    ],
    [
      '3,000,000 stop sequences',
      '/v1/chat/completions',
      () => `{"model":"local:chat","messages":[${chatUser}],"stop":${repeated('""', 3_000_000)}}`,
      'openai',
    ],
    [
      '400,000 Anthropic messages',
      '/anthropic/v1/messages',
      () => `{"model":"local:chat","max_tokens":8,"messages":${repeated(chatUser, 400_000)}}`,
      'anthropic',
    ],
    [
      '400,000 Responses input items',
      '/v1/responses',
      () => `{"model":"local:chat","input":${repeated(chatUser, 400_000)}}`,
      'openai',
    ],
    [
      '4,000,000 empty arrays on /v1/mcp',
      '/v1/mcp',
      () => `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"junk":${repeated('[]', 4_000_000)}}}`,
      'mcp',
    ],
  ] as const)(
    '%s: 400 too_many_json_values, blocking the loop a fraction of what parsing it would',
    async (_name, path, build, family) => {
      const body = Buffer.from(build());
      let answer: Awaited<ReturnType<typeof send>> | undefined;
      const refusalBlock = await leastOfThree(async () => {
        answer = await send(path, body);
      });
      const parse = await parseBlock(body);
      expect(answer!.status, JSON.stringify(answer!.body).slice(0, 300)).toBe(400);
      expect(answer!.requestId).toMatch(/^req_/);
      const message = `more than ${MAX_JSON_TOKENS.toLocaleString('en-US')} keys and values`;
      if (family === 'openai') {
        expect(answer!.body.error).toMatchObject({ type: 'invalid_request_error', code: 'too_many_json_values' });
        expect(answer!.body.error.message).toContain(message);
      } else if (family === 'anthropic') {
        expect(answer!.body).toMatchObject({
          type: 'error',
          error: { type: 'invalid_request_error' },
          request_id: answer!.requestId,
        });
        expect(answer!.body.error.message).toContain(message);
      } else {
        expect(answer!.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
        expect(answer!.body.error.message).toContain(message);
      }
      expect(refusalBlock, `refusal blocked ${refusalBlock} ms of CPU, parsing alone ${parse} ms`).toBeLessThan(
        parse / 3,
      );
      const health = await request(t.app).get('/health');
      expect(health.status).toBe(200);
    },
  );

  // The largest bodies each dialect accepts (the contract's `maxItems` of minimal messages) are served holding
  // the event loop less than half of what parsing the attack's body alone did (400,000 messages; issue 28). With
  // the old bound, 100,000 messages held it about 2–4 times that parse.
  it.each([
    [
      'chat messages',
      '/v1/chat/completions',
      () => `{"model":"local:chat","messages":${repeated(chatUser, chatMessagesBound)}}`,
    ],
    [
      'Responses input items',
      '/v1/responses',
      () => `{"model":"local:chat","input":${repeated(chatUser, responsesInputBound)}}`,
    ],
    [
      'Anthropic messages',
      '/anthropic/v1/messages',
      () => `{"model":"local:chat","max_tokens":8,"messages":${repeated(chatUser, anthropicMessagesBound)}}`,
    ],
    [
      'Anthropic count_tokens messages',
      '/anthropic/v1/messages/count_tokens',
      () => `{"model":"local:chat","messages":${repeated(chatUser, countTokensMessagesBound)}}`,
    ],
  ] as const)(
    "the largest accepted body, %s at the bound, holds the loop a fraction of the attack's parse",
    async (_name, path, build) => {
      const body = Buffer.from(build());
      let answer: Awaited<ReturnType<typeof send>> | undefined;
      const hold = await leastOfThree(async () => {
        answer = await send(path, body);
      });
      const attackParse = await parseBlock(Buffer.from(`{"messages":${repeated(chatUser, 400_000)}}`));
      expect(answer!.status, JSON.stringify(answer!.body).slice(0, 300)).toBe(200);
      expect(hold, `serving it blocked ${hold} ms of CPU, parsing the attack alone ${attackParse} ms`).toBeLessThan(
        attackParse / 2,
      );
    },
  );
});
