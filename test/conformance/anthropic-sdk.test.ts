/**
 * Conformance: the OFFICIAL `@anthropic-ai/sdk` (1.12.0) against a real Omnigate server on an ephemeral port,
 * baseURL `http://127.0.0.1:PORT/anthropic`.
 *
 * - With the built-in deterministic `local:chat` model (see server/providers/local/reference-reply.ts): create,
 *   the stream helper (`.on('text')`, `finalMessage()`), a streamed tool_use and its tool_result turn,
 *   countTokens (equal to the server's tokenizer estimate), the SDK's error classes with their request ids, both
 *   ways of authenticating (1.x sends `Authorization: Bearer`; older SDKs, the AI SDK, LangChain and Claude Code
 *   send `x-api-key` + `anthropic-version: 2023-06-01`) and Claude Code's `?beta=true` + `anthropic-beta` list.
 * - Through the gateway to a scripted fake Anthropic upstream (native passthrough): create, stream, a streamed
 *   tool_use, countTokens, and `?beta=true` / `anthropic-beta` reaching the upstream.
 *
 * A recording `fetch` shows what the SDK really put on the wire, so each auth test checks the header it claims to.
 */
import Anthropic, { type APIError, AuthenticationError, BadRequestError, NotFoundError } from '@anthropic-ai/sdk';
import type { Message, MessageParam, Tool } from '@anthropic-ai/sdk/resources/messages';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeMessagesRequest } from '../../server/formats/anthropic-messages/index.js';
import type { AnthropicMessagesRequest } from '../../server/formats/anthropic-messages/wire-types.js';
import { countCallInputTokens } from '../../server/tokens/tokenizer.js';
import { readSse } from '../helpers/read-sse.js';
import { assertMatchesSchema } from '../helpers/spec-schemas.js';
import { startScriptedAnthropic, type ScriptedUpstream } from '../matrix/scripted-upstreams.js';
import { anthropicJson, anthropicSse, type ScriptedReply } from '../matrix/upstream-scripts.js';
import { startServer, type StartedServer } from './start-server.js';

const MODEL = 'local:chat';
const WEATHER_ARGS = { city: 'Paris' };
const CALL_TEXT = `call get_weather ${JSON.stringify(WEATHER_ARGS)}`;
const TOOL_OUTPUT = '{"temp_c":21}';
const TOOL_REPORT = `Tool get_weather returned: ${TOOL_OUTPUT}`;
/** What Claude Code 2.1.197 sends (shared/research/real-clients.md §1.4). */
const CLAUDE_CODE_BETAS =
  'claude-code-20250219,interleaved-thinking-2025-05-14,thinking-token-count-2026-05-13,context-management-2025-06-27,' +
  'prompt-caching-scope-2026-01-05,mid-conversation-system-2026-04-07,effort-2025-11-24';

const tools: Tool[] = [
  {
    name: 'get_weather',
    description: 'Current weather for a city',
    input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
];

interface SentRequest {
  url: string;
  headers: Record<string, string>;
}

/** A fetch that records the URL and headers of every request the SDK sends. */
function recordingFetch(sent: SentRequest[]): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    sent.push({ url: request.url, headers: Object.fromEntries(request.headers.entries()) });
    return fetch(input, init);
  };
}

/** Asserts the promise rejects with an instance of `errorClass` and returns the error. */
async function expectApiError<E extends APIError>(
  promise: Promise<unknown>,
  errorClass: abstract new (...args: never[]) => E,
): Promise<E> {
  let caught: unknown;
  try {
    await promise;
  } catch (error) {
    caught = error;
  }
  expect(caught, 'expected the call to throw').toBeInstanceOf(errorClass);
  return caught as E;
}

function textOf(message: Message): string {
  return message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
}

let started: StartedServer;
let client: Anthropic;
let sent: SentRequest[];

beforeAll(async () => {
  started = await startServer();
  sent = [];
  client = new Anthropic({
    apiKey: started.key,
    baseURL: `${started.baseURL}/anthropic`,
    maxRetries: 0,
    fetch: recordingFetch(sent),
  });
});

afterAll(async () => {
  await started?.close();
});

describe('messages (local:chat)', () => {
  it('create: text, stop_reason, usage, request id', async () => {
    const { data, response, request_id } = await client.messages
      .create({ model: MODEL, max_tokens: 256, messages: [{ role: 'user', content: 'Hello there' }] })
      .withResponse();
    expect(data.type).toBe('message');
    expect(data.role).toBe('assistant');
    expect(data.model).toBe(MODEL);
    expect(data.id).toMatch(/^msg_/);
    expect(data.content).toEqual([expect.objectContaining({ type: 'text', text: 'You said: Hello there' })]);
    expect(data.stop_reason).toBe('end_turn');
    expect(data.stop_sequence).toBeNull();
    expect(data.usage.input_tokens).toBeGreaterThan(0);
    expect(data.usage.output_tokens).toBeGreaterThan(0);
    expect(request_id).toMatch(/^req_/);
    expect(request_id).toBe(response.headers.get('x-svc-request-id'));
  });

  it('stream helper: text events add up to finalMessage(), which equals the JSON answer', async () => {
    const params = {
      model: MODEL,
      max_tokens: 256,
      messages: [{ role: 'user' as const, content: 'Stream this, please' }],
    };
    const whole = await client.messages.create(params);
    const deltas: string[] = [];
    const stream = client.messages.stream(params).on('text', (delta) => deltas.push(delta));
    const final = await stream.finalMessage();
    expect(deltas.length).toBeGreaterThan(2);
    expect(deltas.join('')).toBe('You said: Stream this, please');
    expect(textOf(final)).toBe(deltas.join(''));
    expect(textOf(final)).toBe(textOf(whole));
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage.output_tokens).toBe(whole.usage.output_tokens);
    expect(final.usage.input_tokens).toBe(whole.usage.input_tokens);
  });

  it('raw stream events match the contract and arrive with event: lines', async () => {
    const response = await fetch(`${started.baseURL}/anthropic/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': started.key, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: MODEL, max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    expect(response.status).toBe(200);
    const events = readSse(await response.text());
    expect(events.map((event) => event.event).at(0)).toBe('message_start');
    expect(events.map((event) => event.event).at(-1)).toBe('message_stop');
    for (const event of events) {
      const data = JSON.parse(event.data) as { type: string };
      assertMatchesSchema('AnthropicStreamEvent', data);
      expect(event.event).toBe(data.type);
    }
  });

  it('streamed tool_use: input {city: "Paris"}, stop_reason tool_use; then the tool_result turn answers', async () => {
    const messages: MessageParam[] = [{ role: 'user', content: CALL_TEXT }];
    const snapshots: unknown[] = [];
    const stream = client.messages
      .stream({ model: MODEL, max_tokens: 256, tools, messages })
      .on('inputJson', (_partial, snapshot) => snapshots.push(snapshot));
    const final = await stream.finalMessage();
    expect(final.stop_reason).toBe('tool_use');
    const toolUse = final.content.find((block) => block.type === 'tool_use');
    expect(toolUse).toBeDefined();
    if (toolUse?.type !== 'tool_use') {
      throw new Error('no tool_use block');
    }
    expect(toolUse.name).toBe('get_weather');
    expect(toolUse.input).toEqual(WEATHER_ARGS);
    expect(toolUse.id).toMatch(/^(call|toolu)_/);
    expect(snapshots.length, 'the arguments arrived in several input_json_delta events').toBeGreaterThan(1);
    expect(snapshots.at(-1)).toEqual(WEATHER_ARGS);

    const followUp: MessageParam[] = [
      ...messages,
      { role: 'assistant', content: final.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: TOOL_OUTPUT }] },
    ];
    const answer = await client.messages.create({ model: MODEL, max_tokens: 256, tools, messages: followUp });
    expect(textOf(answer)).toBe(TOOL_REPORT);
    expect(answer.stop_reason).toBe('end_turn');
    const streamed = await client.messages
      .stream({ model: MODEL, max_tokens: 256, tools, messages: followUp })
      .finalMessage();
    expect(textOf(streamed)).toBe(TOOL_REPORT);
    expect(streamed.stop_reason).toBe('end_turn');
  });

  it('countTokens: input_tokens > 0, equal to the server tokenizer estimate and to create()’s input_tokens', async () => {
    const params = {
      model: MODEL,
      system: 'You are terse.',
      tools,
      messages: [{ role: 'user' as const, content: 'How many tokens is this question, roughly?' }],
    };
    const counted = await client.messages.countTokens(params);
    expect(counted.input_tokens).toBeGreaterThan(0);
    const decoded = decodeMessagesRequest(
      { ...params, max_tokens: 1 } as unknown as AnthropicMessagesRequest,
      () => {},
    );
    expect(counted.input_tokens).toBe(await countCallInputTokens(decoded.options));
    const created = await client.messages.create({ ...params, max_tokens: 64 });
    expect(created.usage.input_tokens).toBe(counted.input_tokens);
  });
});

describe('errors carry the SDK class and the request id', () => {
  it('unknown model → NotFoundError', async () => {
    const error = await expectApiError(
      client.messages.create({ model: 'no-such-model', max_tokens: 16, messages: [{ role: 'user', content: 'x' }] }),
      NotFoundError,
    );
    expect(error.status).toBe(404);
    expect(error.requestID).toMatch(/^req_/);
    expect(error.error).toMatchObject({
      type: 'error',
      error: { type: 'not_found_error' },
      request_id: error.requestID,
    });
  });

  it('missing max_tokens → BadRequestError', async () => {
    const error = await expectApiError(
      client.messages.create({
        model: MODEL,
        messages: [{ role: 'user', content: 'x' }],
      } as unknown as Anthropic.MessageCreateParamsNonStreaming),
      BadRequestError,
    );
    expect(error.status).toBe(400);
    expect(error.requestID).toMatch(/^req_/);
    expect(error.error).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error' },
      request_id: error.requestID,
    });
    expect(JSON.stringify(error.error)).toContain('max_tokens');
  });

  it('bad key → AuthenticationError', async () => {
    const bad = new Anthropic({ apiKey: 'og-not-a-real-key', baseURL: `${started.baseURL}/anthropic`, maxRetries: 0 });
    const error = await expectApiError(
      bad.messages.create({ model: MODEL, max_tokens: 16, messages: [{ role: 'user', content: 'x' }] }),
      AuthenticationError,
    );
    expect(error.status).toBe(401);
    expect(error.requestID).toMatch(/^req_/);
    expect(error.error).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
  });
});

describe('authentication', () => {
  const params = { model: MODEL, max_tokens: 32, messages: [{ role: 'user' as const, content: 'Hello there' }] };

  it('apiKey: SDK 1.x sends Authorization: Bearer (and no x-api-key), accepted', async () => {
    sent.length = 0;
    const message = await client.messages.create(params);
    expect(textOf(message)).toBe('You said: Hello there');
    expect(sent).toHaveLength(1);
    expect(sent[0].headers.authorization).toBe(`Bearer ${started.key}`);
    expect(sent[0].headers['x-api-key']).toBeUndefined();
  });

  it('authToken: Authorization: Bearer, accepted', async () => {
    const requests: SentRequest[] = [];
    const tokenClient = new Anthropic({
      authToken: started.key,
      baseURL: `${started.baseURL}/anthropic`,
      maxRetries: 0,
      fetch: recordingFetch(requests),
    });
    expect(textOf(await tokenClient.messages.create(params))).toBe('You said: Hello there');
    expect(requests[0].headers.authorization).toBe(`Bearer ${started.key}`);
  });

  it('x-api-key + anthropic-version: 2023-06-01 (as older SDKs, the AI SDK and Claude Code send), accepted', async () => {
    const requests: SentRequest[] = [];
    const headerClient = new Anthropic({
      baseURL: `${started.baseURL}/anthropic`,
      defaultHeaders: { 'x-api-key': started.key, 'anthropic-version': '2023-06-01' },
      maxRetries: 0,
      fetch: recordingFetch(requests),
    });
    expect(textOf(await headerClient.messages.create(params))).toBe('You said: Hello there');
    const streamed = await headerClient.messages.stream(params).finalMessage();
    expect(textOf(streamed)).toBe('You said: Hello there');
    expect(requests).toHaveLength(2);
    for (const request of requests) {
      expect(request.headers['x-api-key']).toBe(started.key);
      expect(request.headers['anthropic-version']).toBe('2023-06-01');
      expect(request.headers.authorization).toBeUndefined();
    }
  });

  it('x-api-key on a raw request works; a wrong x-api-key is a 401 authentication_error with request-id', async () => {
    const good = await fetch(`${started.baseURL}/anthropic/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': started.key, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify(params),
    });
    expect(good.status).toBe(200);
    expect(((await good.json()) as Message).content[0]).toMatchObject({ type: 'text', text: 'You said: Hello there' });
    const bad = await fetch(`${started.baseURL}/anthropic/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'og-wrong', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify(params),
    });
    expect(bad.status).toBe(401);
    expect(bad.headers.get('request-id')).toMatch(/^req_/);
    expect(await bad.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
  });
});

describe('Claude Code: ?beta=true and an anthropic-beta list', () => {
  const claudeCodeHeaders = () => ({
    'content-type': 'application/json',
    accept: 'application/json',
    'x-api-key': started.key,
    'anthropic-version': '2023-06-01',
    'anthropic-beta': CLAUDE_CODE_BETAS,
    'anthropic-dangerous-direct-browser-access': 'true',
    'x-app': 'cli',
  });

  it('streamed messages?beta=true is accepted', async () => {
    const response = await fetch(`${started.baseURL}/anthropic/v1/messages?beta=true`, {
      method: 'POST',
      headers: claudeCodeHeaders(),
      body: JSON.stringify({
        model: MODEL,
        max_tokens: 32000,
        stream: true,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello there' }] }],
      }),
    });
    expect(response.status).toBe(200);
    const events = readSse(await response.text());
    const text = events
      .map((event) => JSON.parse(event.data) as { type: string; delta?: { type: string; text?: string } })
      .filter((data) => data.type === 'content_block_delta' && data.delta?.type === 'text_delta')
      .map((data) => data.delta!.text)
      .join('');
    expect(text).toBe('You said: Hello there');
    expect(events.at(-1)?.event).toBe('message_stop');
  });

  it('count_tokens?beta=true is accepted', async () => {
    const response = await fetch(`${started.baseURL}/anthropic/v1/messages/count_tokens?beta=true`, {
      method: 'POST',
      headers: claudeCodeHeaders(),
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Hello there' }] }),
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { input_tokens: number }).input_tokens).toBeGreaterThan(0);
  });

  it('the SDK’s beta.messages with betas sends the anthropic-beta list, accepted', async () => {
    sent.length = 0;
    const message = await client.beta.messages.create({
      model: MODEL,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Hello there' }],
      betas: CLAUDE_CODE_BETAS.split(','),
    });
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'You said: Hello there' });
    expect(sent[0].headers['anthropic-beta']).toBe(CLAUDE_CODE_BETAS);
  });
});

describe('through an Anthropic upstream (scripted fake, native passthrough)', () => {
  const UPSTREAM_KEY = 'sk-ant-upstream-conformance';
  const UPSTREAM_MODEL = 'claude-sonnet-4-5';
  const usage = { input: 1200, output: 42, cacheRead: 1024, cacheWrite: 26, reasoning: 0 };
  const textReply: ScriptedReply = {
    text: 'Bonjour — ça va ? 👋 Je suis là.',
    finish: 'stop',
    usage,
    model: 'claude-sonnet-4-5-20250929',
  };
  const toolReply: ScriptedReply = {
    text: '',
    toolCalls: [
      {
        id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6',
        name: 'get_weather',
        arguments: JSON.stringify({ city: 'Paris', unit: 'celsius', days: 3 }),
      },
    ],
    finish: 'tool-calls',
    usage,
    model: 'claude-sonnet-4-5-20250929',
  };
  let fake: ScriptedUpstream;
  let gateway: StartedServer;
  let viaGateway: Anthropic;

  beforeAll(async () => {
    fake = await startScriptedAnthropic();
    gateway = await startServer({
      providers: [
        {
          id: 'anth',
          type: 'anthropic',
          base_url: fake.baseUrl,
          api_key: UPSTREAM_KEY,
          anthropic_version: '2023-06-01',
          timeout_ms: 10_000,
          max_connections: 4,
          headers: {},
        },
      ],
      aliases: {},
      models: [{ provider: 'anth', model: UPSTREAM_MODEL, id: 'claude', type: 'chat', aliases: [] }],
    });
    viaGateway = new Anthropic({ apiKey: gateway.key, baseURL: `${gateway.baseURL}/anthropic`, maxRetries: 0 });
  });

  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
  });

  function expectUpstreamGotMessages(stream: boolean): void {
    const [request] = fake.received();
    expect(fake.received()).toHaveLength(1);
    expect(request.url.split('?')[0]).toBe('/v1/messages');
    expect(request.headers['x-api-key']).toBe(UPSTREAM_KEY);
    expect(request.headers['anthropic-version']).toBe('2023-06-01');
    expect(request.headers.authorization).toBeUndefined();
    expect(request.body).toMatchObject({ model: UPSTREAM_MODEL, max_tokens: 128 });
    expect(request.body.stream === true).toBe(stream);
    expect(request.body).not.toHaveProperty('choices');
    expect(request.body).not.toHaveProperty('stream_options');
  }

  it('create: the upstream’s message, with its exact usage (cache counters included)', async () => {
    fake.script(() => anthropicJson(textReply));
    const message = await viaGateway.messages.create({
      model: 'claude',
      max_tokens: 128,
      messages: [{ role: 'user', content: 'Salut' }],
    });
    expectUpstreamGotMessages(false);
    expect(textOf(message)).toBe(textReply.text);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage).toMatchObject({
      input_tokens: 150,
      output_tokens: 42,
      cache_read_input_tokens: 1024,
      cache_creation_input_tokens: 26,
    });
  });

  it('stream: text events and finalMessage() with the upstream’s usage', async () => {
    fake.script(() => anthropicSse(textReply));
    const deltas: string[] = [];
    const final = await viaGateway.messages
      .stream({ model: 'claude', max_tokens: 128, messages: [{ role: 'user', content: 'Salut' }] })
      .on('text', (delta) => deltas.push(delta))
      .finalMessage();
    expectUpstreamGotMessages(true);
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.join('')).toBe(textReply.text);
    expect(textOf(final)).toBe(textReply.text);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage).toMatchObject({
      input_tokens: 150,
      output_tokens: 42,
      cache_read_input_tokens: 1024,
      cache_creation_input_tokens: 26,
    });
  });

  it('streamed tool_use: every argument fragment arrives; input parses to the upstream’s arguments', async () => {
    fake.script(() => anthropicSse(toolReply));
    const partials: string[] = [];
    const final = await viaGateway.messages
      .stream({ model: 'claude', max_tokens: 128, tools, messages: [{ role: 'user', content: CALL_TEXT }] })
      .on('inputJson', (partial) => partials.push(partial))
      .finalMessage();
    expectUpstreamGotMessages(true);
    expect(final.stop_reason).toBe('tool_use');
    expect(final.content).toEqual([
      {
        type: 'tool_use',
        id: toolReply.toolCalls![0].id,
        name: 'get_weather',
        input: { city: 'Paris', unit: 'celsius', days: 3 },
      },
    ]);
    expect(partials.filter((partial) => partial !== '').join('')).toBe(toolReply.toolCalls![0].arguments);
    expect(partials.filter((partial) => partial !== '').length).toBeGreaterThanOrEqual(10);
  });

  it('countTokens: the upstream’s exact count', async () => {
    fake.script(() => ({ contentType: 'application/json', body: '{"input_tokens":2095}', argumentChunks: [] }));
    const counted = await viaGateway.messages.countTokens({
      model: 'claude',
      messages: [{ role: 'user', content: 'Salut' }],
    });
    expect(counted.input_tokens).toBe(2095);
    const [request] = fake.received();
    expect(request.url.split('?')[0]).toBe('/v1/messages/count_tokens');
    expect(request.body).toMatchObject({ model: UPSTREAM_MODEL });
  });

  it('?beta=true and the anthropic-beta list reach the upstream', async () => {
    fake.script(() => anthropicSse(textReply));
    const response = await fetch(`${gateway.baseURL}/anthropic/v1/messages?beta=true`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': gateway.key,
        'anthropic-version': '2023-06-01',
        'anthropic-beta': CLAUDE_CODE_BETAS,
      },
      body: JSON.stringify({
        model: 'claude',
        max_tokens: 128,
        stream: true,
        messages: [{ role: 'user', content: 'Salut' }],
      }),
    });
    expect(response.status).toBe(200);
    expect(readSse(await response.text()).at(-1)?.event).toBe('message_stop');
    const [request] = fake.received();
    expect(request.url).toBe('/v1/messages?beta=true');
    expect(request.headers['anthropic-beta']).toBe(CLAUDE_CODE_BETAS);
    expect(request.headers['x-api-key']).toBe(UPSTREAM_KEY);
  });
});
