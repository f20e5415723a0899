import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError, UpstreamError } from '../../core/api-error.js';
import type { ChatCallOptions, ChatStreamPart } from '../../core/chat.js';
import type { CallContext, CallWarning } from '../../core/call-context.js';
import { sendAnthropicJson as sendJson, sendAnthropicSse as sendSse } from '../../../test/fakes/answers.js';
import { startFakeUpstream, type FakeUpstream } from '../../../test/fakes/fake-upstream.js';
import { anthropicFixture as fixture } from '../../../test/fakes/fixtures.js';
import type { AnthropicConfig } from './http-client.js';
import { createAnthropicProvider, type AnthropicProvider } from './index.js';

const API_KEY = 'sk-ant-api03-TEST-SECRET-KEY-0123456789';

let upstream: FakeUpstream;
let provider: AnthropicProvider;
let warnings: CallWarning[];

function configFor(overrides: Partial<AnthropicConfig> = {}): AnthropicConfig {
  return {
    id: 'claude',
    type: 'anthropic',
    base_url: upstream.origin,
    api_key: API_KEY,
    timeout_ms: 5000,
    max_connections: 4,
    headers: { 'x-team': 'gateway' },
    anthropic_version: '2023-06-01',
    ...overrides,
  };
}

function context(signal = new AbortController().signal): CallContext {
  return { signal, requestId: 'req_test', warn: (warning) => warnings.push(warning) };
}

async function collect(parts: AsyncIterable<ChatStreamPart>): Promise<ChatStreamPart[]> {
  const out: ChatStreamPart[] = [];
  for await (const part of parts) {
    out.push(part);
  }
  return out;
}

async function text(body: AsyncIterable<Uint8Array>): Promise<string> {
  const pieces: Buffer[] = [];
  for await (const piece of body) {
    pieces.push(Buffer.from(piece));
  }
  return Buffer.concat(pieces).toString('utf8');
}

const HELLO: ChatCallOptions = {
  messages: [
    { role: 'system', content: [{ type: 'text', text: 'Be kind.' }] },
    { role: 'user', content: [{ type: 'text', text: 'Hello' }] },
  ],
};

beforeEach(async () => {
  upstream = await startFakeUpstream();
  provider = createAnthropicProvider(configFor());
  warnings = [];
});

afterEach(async () => {
  await provider.close();
  await upstream.close();
});

describe('anthropic provider: generate', () => {
  it('posts the encoded request with the configured headers and decodes the message', async () => {
    upstream.handle((_request, res) => sendJson(res, 200, fixture('text.json')));
    const result = await provider
      .chatModel('claude-sonnet-4-5-20250929')
      .generate({ ...HELLO, temperature: 0.5 }, context());
    expect(result).toEqual({
      content: [{ type: 'text', text: 'Hello! How can I help you today?' }],
      finishReason: 'stop',
      usage: { inputTokens: 12, outputTokens: 12, cacheReadTokens: 0, cacheWriteTokens: 0 },
    });
    const [request] = upstream.requests;
    expect(request.method).toBe('POST');
    expect(request.url).toBe('/v1/messages');
    expect(request.headers['x-api-key']).toBe(API_KEY);
    expect(request.headers['anthropic-version']).toBe('2023-06-01');
    expect(request.headers['x-team']).toBe('gateway');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers.authorization).toBeUndefined();
    expect(request.body).toEqual({
      model: 'claude-sonnet-4-5-20250929',
      max_tokens: 4096,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
      system: [{ type: 'text', text: 'Be kind.' }],
      temperature: 0.5,
    });
  });

  it('appends request paths to a base URL with a path prefix', async () => {
    await provider.close();
    provider = createAnthropicProvider(configFor({ base_url: `${upstream.origin}/proxy/anthropic/` }));
    upstream.handle((_request, res) => sendJson(res, 200, fixture('text.json')));
    await provider.chatModel('m').generate(HELLO, context());
    expect(upstream.requests[0].url).toBe('/proxy/anthropic/v1/messages');
  });
});

describe('anthropic provider: stream', () => {
  it('streams text, with the SSE cut into 7-byte pieces through multi-byte characters', async () => {
    upstream.handle((_request, res) => sendSse(res, fixture('text.sse'), 7));
    const parts = await collect(provider.chatModel('claude-sonnet-4-5').stream(HELLO, context()));
    expect(parts).toEqual([
      { type: 'text-delta', text: 'Bonjour' },
      { type: 'text-delta', text: ' — ça va ? 👋' },
      { type: 'text-delta', text: ' Je suis là.' },
      {
        type: 'finish',
        finishReason: 'stop',
        usage: { inputTokens: 21, outputTokens: 15, cacheReadTokens: 0, cacheWriteTokens: 0 },
      },
    ]);
    expect((upstream.requests[0].body as { stream?: unknown }).stream).toBe(true);
    expect(upstream.requests[0].headers.accept).toBe('text/event-stream');
  });

  it('streams a tool call whose arguments arrive in 11 input_json_delta fragments, cut into 3-byte pieces', async () => {
    upstream.handle((_request, res) => sendSse(res, fixture('tool-use.sse'), 3));
    const parts = await collect(provider.chatModel('claude-sonnet-4-5').stream(HELLO, context()));
    const fragments = [
      '{"location":',
      ' "San',
      ' Francisc',
      'o,',
      ' CA"',
      ', "unit": ',
      '"celsi',
      'us", "da',
      'ys": ',
      '3',
      '}',
    ];
    expect(parts).toEqual([
      { type: 'text-delta', text: 'Okay, let me check' },
      { type: 'text-delta', text: ' the weather for San Francisco, CA:' },
      { type: 'tool-call-start', index: 0, id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather' },
      ...fragments.map((fragment) => ({ type: 'tool-call-delta', index: 0, argumentsDelta: fragment })),
      { type: 'tool-call-end', index: 0 },
      {
        type: 'finish',
        finishReason: 'tool-calls',
        usage: { inputTokens: 472, outputTokens: 89, cacheReadTokens: 0, cacheWriteTokens: 0 },
      },
    ]);
    const args = parts.flatMap((part) => (part.type === 'tool-call-delta' ? [part.argumentsDelta] : [])).join('');
    expect(JSON.parse(args)).toEqual({ location: 'San Francisco, CA', unit: 'celsius', days: 3 });
  });

  it('streams thinking with its signature, redacted thinking, and usage with cache counters from message_start', async () => {
    upstream.handle((_request, res) => sendSse(res, fixture('thinking.sse'), 64));
    const parts = await collect(
      provider.chatModel('claude-sonnet-4-5').stream({ ...HELLO, reasoning: { budgetTokens: 2048 } }, context()),
    );
    expect(parts).toEqual([
      { type: 'reasoning-delta', text: 'I need to find the GCD of 1071 and 462 using the Euclidean algorithm.\n\n' },
      { type: 'reasoning-delta', text: '1071 = 2 × 462 + 147\n462 = 3 × 147 + 21\n147 = 7 × 21 + 0' },
      { type: 'reasoning-end', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds' },
      {
        type: 'reasoning-end',
        redactedData: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj',
      },
      { type: 'text-delta', text: 'The greatest common divisor of 1071 and 462 is **21**.' },
      {
        type: 'finish',
        finishReason: 'stop',
        usage: { inputTokens: 3860, outputTokens: 140, cacheReadTokens: 1800, cacheWriteTokens: 2048 },
      },
    ]);
    expect((upstream.requests[0].body as { thinking?: unknown }).thinking).toEqual({
      type: 'enabled',
      budget_tokens: 2048,
    });
  });

  it('throws 503 on an overloaded error event mid-stream, after the parts before it', async () => {
    upstream.handle((_request, res) => sendSse(res, fixture('error-mid-stream.sse'), 50));
    const parts: ChatStreamPart[] = [];
    const error = await (async () => {
      for await (const part of provider.chatModel('m').stream(HELLO, context())) {
        parts.push(part);
      }
    })().catch((caught: unknown) => caught);
    expect(parts).toEqual([{ type: 'text-delta', text: 'Partial answ' }]);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({
      status: 503,
      type: 'service_unavailable_error',
      message: 'Upstream claude failed mid-stream (overloaded_error): Overloaded',
    });
  });

  it('throws before the first part when the upstream refuses the call', async () => {
    upstream.handle((_request, res) => sendJson(res, 429, fixture('error-429.json'), { 'retry-after': '17' }));
    const iterator = provider.chatModel('m').stream(HELLO, context())[Symbol.asyncIterator]();
    await expect(iterator.next()).rejects.toMatchObject({ status: 429, headers: { 'retry-after': '17' } });
  });

  it('reuses the connection after a complete stream', async () => {
    await provider.close();
    provider = createAnthropicProvider(configFor({ max_connections: 1 }));
    upstream.handle((_request, res) => sendSse(res, fixture('text.sse'), 40));
    const model = provider.chatModel('m');
    await collect(model.stream(HELLO, context()));
    await collect(model.stream(HELLO, context()));
    await model.generate(HELLO, context()).catch(() => undefined);
    expect(upstream.requests).toHaveLength(3);
    expect(upstream.connections).toBe(1);
  });

  it('closes the upstream socket when the call is aborted mid-stream', async () => {
    let upstreamClosed!: () => void;
    const closed = new Promise<void>((resolve) => {
      upstreamClosed = resolve;
    });
    upstream.handle((_request, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(fixture('text.sse').split('event: content_block_delta')[0]);
      const timer = setInterval(() => {
        res.write(
          'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"more "}}\n\n',
        );
      }, 20);
      res.on('close', () => {
        clearInterval(timer);
        upstreamClosed();
      });
    });
    const controller = new AbortController();
    const parts: ChatStreamPart[] = [];
    const error = await (async () => {
      for await (const part of provider.chatModel('m').stream(HELLO, context(controller.signal))) {
        parts.push(part);
        if (parts.length === 3) {
          controller.abort();
        }
      }
    })().catch((caught: unknown) => caught);
    expect(parts.slice(0, 3)).toEqual([
      { type: 'text-delta', text: 'more ' },
      { type: 'text-delta', text: 'more ' },
      { type: 'text-delta', text: 'more ' },
    ]);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 499 });
    await expect(
      Promise.race([
        closed.then(() => 'closed'),
        new Promise((resolve) => setTimeout(() => resolve('still open'), 2000)),
      ]),
    ).resolves.toBe('closed');
  });

  it('closes the upstream socket when the consumer stops mid-answer', async () => {
    let upstreamClosed!: () => void;
    const closed = new Promise<void>((resolve) => {
      upstreamClosed = resolve;
    });
    upstream.handle((_request, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(fixture('text.sse').split('event: content_block_delta')[0]);
      const timer = setInterval(() => {
        res.write(
          'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}\n\n',
        );
      }, 20);
      res.on('close', () => {
        clearInterval(timer);
        upstreamClosed();
      });
    });
    for await (const part of provider.chatModel('m').stream(HELLO, context())) {
      expect(part).toEqual({ type: 'text-delta', text: 'x' });
      break;
    }
    await expect(
      Promise.race([
        closed.then(() => 'closed'),
        new Promise((resolve) => setTimeout(() => resolve('still open'), 2000)),
      ]),
    ).resolves.toBe('closed');
  });
});

describe('anthropic provider: errors', () => {
  it('maps 401 to 502 without ever showing the key', async () => {
    upstream.handle((_request, res) =>
      sendJson(
        res,
        401,
        JSON.stringify({
          type: 'error',
          error: { type: 'authentication_error', message: `invalid x-api-key ${API_KEY}` },
        }),
      ),
    );
    const error = await provider
      .chatModel('m')
      .generate(HELLO, context())
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ status: 502, upstreamStatus: 401, type: 'upstream_error' });
    expect((error as Error).message).toBe(
      "Upstream claude rejected the gateway's credentials (401): invalid x-api-key [redacted]",
    );
    expect(JSON.stringify(error)).not.toContain('SECRET');
    expect(String((error as Error).stack)).not.toContain('SECRET');
  });

  it('maps 401 with the fixture body', async () => {
    upstream.handle((_request, res) => sendJson(res, 401, fixture('error-401.json')));
    await expect(provider.chatModel('m').generate(HELLO, context())).rejects.toMatchObject({
      status: 502,
      message: "Upstream claude rejected the gateway's credentials (401): invalid x-api-key",
    });
  });

  it('keeps 429 with its retry-after', async () => {
    upstream.handle((_request, res) => sendJson(res, 429, fixture('error-429.json'), { 'retry-after': '17' }));
    const error = await provider
      .chatModel('m')
      .generate(HELLO, context())
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      status: 429,
      type: 'rate_limit_error',
      headers: { 'retry-after': '17' },
      message:
        'Upstream claude is rate limited: This request would exceed the rate limit for your organization of 50 requests per minute.',
    });
  });

  it('maps 529 overloaded to 503, keeping retry-after', async () => {
    upstream.handle((_request, res) => sendJson(res, 529, fixture('error-529.json'), { 'retry-after': '3' }));
    await expect(provider.chatModel('m').generate(HELLO, context())).rejects.toMatchObject({
      status: 503,
      upstreamStatus: 529,
      type: 'service_unavailable_error',
      headers: { 'retry-after': '3' },
      message: 'Upstream claude is overloaded (529): Overloaded',
    });
  });

  it('maps 400 to 400 with the upstream reason', async () => {
    upstream.handle((_request, res) =>
      sendJson(
        res,
        400,
        JSON.stringify({
          type: 'error',
          error: { type: 'invalid_request_error', message: 'max_tokens: Field required' },
        }),
      ),
    );
    await expect(provider.chatModel('m').generate(HELLO, context())).rejects.toMatchObject({
      status: 400,
      message: 'Upstream claude rejected the request (400): max_tokens: Field required',
    });
  });

  it('maps a timeout to 504', async () => {
    await provider.close();
    provider = createAnthropicProvider(configFor({ timeout_ms: 300 }));
    // The upstream never answers: only the 300 ms timeout can end the call (no wall-clock limit on how late).
    upstream.handle(() => undefined);
    await expect(provider.chatModel('m').generate(HELLO, context())).rejects.toMatchObject({
      status: 504,
      code: 'upstream_timeout',
      message: 'Upstream claude did not start answering within 300 ms',
    });
  });

  it('maps a refused connection to 502', async () => {
    const closedServer = createServer();
    closedServer.listen(0, '127.0.0.1');
    await once(closedServer, 'listening');
    const { port } = closedServer.address() as AddressInfo;
    closedServer.close();
    await once(closedServer, 'close');
    await provider.close();
    provider = createAnthropicProvider(configFor({ base_url: `http://127.0.0.1:${port}` }));
    const error = await provider
      .chatModel('m')
      .generate(HELLO, context())
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 502, message: 'Upstream claude could not be reached (ECONNREFUSED)' });
    expect(JSON.stringify(error)).not.toContain('SECRET');
  });
});

describe('anthropic provider: count_tokens', () => {
  it('counts with the upstream endpoint, sending only the fields it accepts', async () => {
    upstream.handle((_request, res) => sendJson(res, 200, fixture('count-tokens.json')));
    const count = await provider
      .chatModel('claude-haiku-4-5')
      .countTokens(
        { ...HELLO, maxOutputTokens: 10, temperature: 0.1, tools: [{ name: 'f', parameters: { type: 'object' } }] },
        context(),
      );
    expect(count).toBe(2095);
    const [request] = upstream.requests;
    expect(request.url).toBe('/v1/messages/count_tokens');
    expect(request.headers['x-api-key']).toBe(API_KEY);
    expect(request.body).toEqual({
      model: 'claude-haiku-4-5',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
      system: [{ type: 'text', text: 'Be kind.' }],
      tools: [{ name: 'f', input_schema: { type: 'object' } }],
    });
  });

  it('forwards a native count_tokens body untouched', async () => {
    upstream.handle((_request, res) => sendJson(res, 200, fixture('count-tokens.json')));
    const body = {
      model: 'claude-haiku-4-5',
      messages: [{ role: 'user', content: 'Hi' }],
      system: [{ type: 'text', text: 'S', cache_control: { type: 'ephemeral' } }],
    };
    const response = await provider.chatModel('claude-haiku-4-5').passthrough!['anthropic-messages']!
      .forwardCountTokens!(body, {
      ...context(),
      query: 'beta=true',
      headers: { 'anthropic-beta': 'token-counting-2024-11-01', 'x-api-key': 'sk-ant-CALLER' },
    });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/json');
    expect(await text(response.body)).toBe(fixture('count-tokens.json'));
    const [request] = upstream.requests;
    expect(request.url).toBe('/v1/messages/count_tokens?beta=true');
    expect(request.text).toBe(JSON.stringify(body));
    expect(request.headers['anthropic-beta']).toBe('token-counting-2024-11-01');
    expect(request.headers['x-api-key']).toBe(API_KEY);
  });
});

describe('anthropic provider: native passthrough', () => {
  it('forwards the body untouched with the query and anthropic-beta, and returns the upstream stream as bytes', async () => {
    upstream.handle((_request, res) => sendSse(res, fixture('tool-use.sse'), 100));
    const body = {
      model: 'claude-sonnet-4-5-20250929',
      max_tokens: 32000,
      stream: true,
      thinking: { type: 'adaptive' },
      context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi', cache_control: { type: 'ephemeral' } }] }],
    };
    const forward = provider.chatModel('claude-sonnet-4-5-20250929').passthrough?.['anthropic-messages'];
    expect(forward).toBeDefined();
    const response = await forward!.forward(body, {
      ...context(),
      query: 'beta=true',
      headers: {
        'anthropic-beta': 'claude-code-20250219,interleaved-thinking-2025-05-14',
        authorization: 'Bearer caller-key',
        'x-api-key': 'sk-ant-CALLER',
      },
    });
    expect(response.status).toBe(200);
    expect(response.headers).toEqual({
      'content-type': 'text/event-stream; charset=utf-8',
      'anthropic-ratelimit-requests-remaining': '49',
    });
    expect(await text(response.body)).toBe(fixture('tool-use.sse'));
    const [request] = upstream.requests;
    expect(request.url).toBe('/v1/messages?beta=true');
    expect(request.text).toBe(JSON.stringify(body));
    expect(request.headers['anthropic-beta']).toBe('claude-code-20250219,interleaved-thinking-2025-05-14');
    expect(request.headers['x-api-key']).toBe(API_KEY);
    expect(request.headers.authorization).toBeUndefined();
    expect(request.headers.accept).toBe('text/event-stream');
  });

  it('throws the mapped error for a non-2xx answer', async () => {
    upstream.handle((_request, res) => sendJson(res, 529, fixture('error-529.json')));
    const forward = provider.chatModel('m').passthrough!['anthropic-messages']!;
    await expect(forward.forward({ model: 'm', max_tokens: 1, messages: [] }, context())).rejects.toMatchObject({
      status: 503,
    });
  });
});
