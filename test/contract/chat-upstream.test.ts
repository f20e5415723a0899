/**
 * POST /v1/chat/completions through an OpenAI-compatible upstream (a fake one on loopback). Chat requests go
 * through natively: the caller's body with only `model` rewritten, the upstream's bytes back unchanged, the
 * usage parsed from them and recorded. Upstream failures map to our statuses; a failure after the stream
 * started becomes a final error frame without [DONE].
 */
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ProviderConfig } from '../../server/config.js';
import { sseHead, writeInPieces } from '../fakes/answers.js';
import { startFakeUpstream, type FakeUpstream } from '../fakes/fake-upstream.js';
import { openAIFixture as fixture } from '../fakes/fixtures.js';
import { expectOpenAIError, expectRequestId, usageOf } from '../helpers/contract-assertions.js';
import { createTestApp, type TestApp } from '../helpers/create-test-app.js';
import { readSse } from '../helpers/read-sse.js';
import { assertMatchesSchema } from '../helpers/spec-schemas.js';

const UPSTREAM_KEY = 'sk-upstream-secret-0123456789';
/** The fixtures' usage: 1342 prompt tokens (1280 of them cached), 8 completion tokens. */
const FIXTURE_USAGE = {
  input_tokens: 1342,
  output_tokens: 8,
  cached_input_tokens: 1280,
  cache_write_tokens: 0,
  reasoning_tokens: 0,
};

let upstream: FakeUpstream;
let gateway: TestApp;

function provider(): ProviderConfig {
  return {
    id: 'fake',
    type: 'openai-compatible',
    base_url: `${upstream.origin}/v1`,
    api_key: UPSTREAM_KEY,
    timeout_ms: 5000,
    max_connections: 4,
    headers: {},
    responses: 'translate',
  };
}

function json(status: number, body: unknown, headers: Record<string, string> = {}) {
  return (_request: unknown, res: ServerResponse) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
}

function replay(name: string) {
  return async (_request: unknown, res: ServerResponse) => {
    sseHead(res);
    await writeInPieces(res, fixture(name), 7);
    res.end();
  };
}

function chatRequest(extra: Record<string, unknown> = {}) {
  return {
    model: 'mini',
    messages: [{ role: 'user', content: 'What is the capital of France?' }],
    temperature: 0,
    ...extra,
  };
}

function post(body: Record<string, unknown>) {
  return request(gateway.app).post('/v1/chat/completions').set('authorization', `Bearer ${gateway.key}`).send(body);
}

beforeEach(async () => {
  upstream = await startFakeUpstream();
  gateway = await createTestApp({
    providers: [provider()],
    models: [{ provider: 'fake', model: 'gpt-4.1-mini', type: 'chat', aliases: ['mini'] }],
  });
});

afterEach(async () => {
  await gateway.registry.close();
  await upstream.close();
});

describe('JSON answers', () => {
  it("passes the caller's body to <base>/chat/completions with only model rewritten, and the upstream bytes back unchanged", async () => {
    upstream.handle(json(200, fixture('text.json')));
    const body = chatRequest({ max_completion_tokens: 64, user: 'u-1', metadata: { team: 'a' } });
    const res = await post(body);
    expect(res.status).toBe(200);
    expectRequestId(res);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.text).toBe(fixture('text.json'));

    expect(upstream.requests).toHaveLength(1);
    const [sent] = upstream.requests;
    expect(sent.method).toBe('POST');
    expect(sent.url).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    expect(sent.headers.accept).toBe('application/json');
    expect(sent.body).toEqual({ ...body, model: 'gpt-4.1-mini' });
  });

  it('records the usage the upstream reported', async () => {
    upstream.handle(json(200, fixture('text.json')));
    const res = await post(chatRequest());
    expect(res.status).toBe(200);
    const id = expectRequestId(res);
    const records = await usageOf(gateway.app, gateway.key, id);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      request_id: id,
      operation: 'createChatCompletion',
      model_requested: 'mini',
      model: 'fake:gpt-4.1-mini',
      provider: 'fake',
      ...FIXTURE_USAGE,
      status: 200,
    });
  });
});

describe('streamed answers', () => {
  it('relays the upstream frames, asks for usage itself and drops the usage chunk the caller did not ask for', async () => {
    upstream.handle(replay('text.sse'));
    const res = await post(chatRequest({ stream: true }));
    expect(res.status).toBe(200);
    const id = expectRequestId(res);
    expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    const events = readSse(res.text);
    expect(events.at(-1)).toEqual({ event: undefined, data: '[DONE]' });
    const chunks = events.slice(0, -1).map((event) => {
      const data = JSON.parse(event.data) as { choices: Array<{ delta: { content?: string } }>; usage: unknown };
      assertMatchesSchema('ChatCompletionChunk', data);
      return data;
    });
    // The fixture's frames, minus its usage-only chunk, each data unchanged.
    const upstreamFrames = readSse(fixture('text.sse')).slice(0, -1);
    expect(events.slice(0, -1).map((event) => event.data)).toEqual(
      upstreamFrames.slice(0, -1).map((event) => event.data),
    );
    expect(chunks.map((chunk) => chunk.choices[0].delta.content ?? '').join('')).toBe(
      'The capital of France is Paris.',
    );
    expect(chunks.every((chunk) => chunk.choices.length === 1)).toBe(true);

    expect(upstream.requests[0].headers.accept).toBe('text/event-stream');
    expect(upstream.requests[0].body).toEqual({
      ...chatRequest({ stream: true }),
      model: 'gpt-4.1-mini',
      stream_options: { include_usage: true },
    });

    const [record] = await usageOf(gateway.app, gateway.key, id);
    expect(record).toMatchObject({
      request_id: id,
      model: 'fake:gpt-4.1-mini',
      provider: 'fake',
      ...FIXTURE_USAGE,
      status: 200,
    });
  });

  it('relays the usage chunk unchanged when the caller asked for it', async () => {
    upstream.handle(replay('text.sse'));
    const res = await post(chatRequest({ stream: true, stream_options: { include_usage: true } }));
    expect(res.status).toBe(200);
    const id = expectRequestId(res);
    const events = readSse(res.text);
    expect(events.map((event) => event.data)).toEqual(readSse(fixture('text.sse')).map((event) => event.data));
    // Every chunk but the usage chunk matches the contract; see the report on `prompt_tokens_details.audio_tokens`.
    for (const event of events.slice(0, -2)) {
      assertMatchesSchema('ChatCompletionChunk', JSON.parse(event.data));
    }
    expect(JSON.parse(events.at(-2)!.data).usage).toMatchObject({
      prompt_tokens: 1342,
      completion_tokens: 8,
      total_tokens: 1350,
    });
    expect(upstream.requests[0].body).toMatchObject({ stream_options: { include_usage: true } });
    const [record] = await usageOf(gateway.app, gateway.key, id);
    expect(record).toMatchObject({ ...FIXTURE_USAGE, status: 200 });
  });

  it('opens the stream at once when the upstream is slow to its first event, and relays the events when they come', async () => {
    // The upstream holds its events until the caller has the headers (or, if the gateway held the headers back
    // for the first event, until a fallback lets the test end and fail): order, not a time limit.
    let release!: (by: string) => void;
    const released = new Promise<string>((resolve) => (release = resolve));
    upstream.handle(async (_request, res) => {
      sseHead(res);
      res.flushHeaders();
      const fallback = setTimeout(() => release('fallback'), 5_000);
      await released;
      clearTimeout(fallback);
      res.end(fixture('text.sse'));
    });
    const server = gateway.app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gateway.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(chatRequest({ stream: true })),
      });
      release('caller');
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain('text/event-stream');
      // The headers were not held back for the first event (sent with it when both are there at once).
      expect(await released).toBe('caller');
      const text = await response.text();
      expect(readSse(text).at(-1)?.data).toBe('[DONE]');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('ends with a final {"error": …} frame and no [DONE] when the upstream fails after the stream started', async () => {
    upstream.handle(async (_request, res) => {
      sseHead(res);
      const frames = readSse(fixture('text.sse')).slice(0, 3);
      res.write(frames.map((frame) => `data: ${frame.data}\n\n`).join(''));
      await new Promise((resolve) => setTimeout(resolve, 50));
      res.destroy();
    });
    const res = await post(chatRequest({ stream: true }));
    expect(res.status).toBe(200);
    const id = expectRequestId(res);
    const events = readSse(res.text);
    expect(events.map((event) => event.data)).not.toContain('[DONE]');
    expect(events).toHaveLength(4);
    for (const event of events.slice(0, 3)) {
      assertMatchesSchema('ChatCompletionChunk', JSON.parse(event.data));
    }
    const last = JSON.parse(events[3].data) as unknown;
    assertMatchesSchema('ChatCompletionStreamError', last);
    assertMatchesSchema('ChatCompletionStreamEvent', last);
    expect(last).toEqual({
      error: {
        message: 'Upstream fake could not be reached (UND_ERR_SOCKET)',
        type: 'upstream_error',
        param: null,
        code: 'upstream_error',
      },
    });
    const [record] = await usageOf(gateway.app, gateway.key, id);
    expect(record).toMatchObject({
      request_id: id,
      operation: 'createChatCompletion',
      model: 'fake:gpt-4.1-mini',
      provider: 'fake',
      status: 502,
    });
  });
});

describe('upstream failures before the answer started', () => {
  it('turns an upstream 401 into 502 upstream_error without leaking the upstream key', async () => {
    upstream.handle(
      json(401, {
        error: {
          message: `Incorrect API key provided: ${UPSTREAM_KEY}.`,
          type: 'invalid_request_error',
          code: 'invalid_api_key',
        },
      }),
    );
    const res = await post(chatRequest());
    expect(res.status).toBe(502);
    const id = expectRequestId(res);
    expect(res.headers['x-should-retry']).toBeUndefined();
    expectOpenAIError(res.body, {
      message: "Upstream fake rejected the gateway's credentials (401): Incorrect API key provided: [redacted].",
      type: 'upstream_error',
      param: null,
      code: 'upstream_error',
    });
    expect(res.text).not.toContain('sk-upstream');
    const [record] = await usageOf(gateway.app, gateway.key, id);
    expect(record).toMatchObject({
      model: 'fake:gpt-4.1-mini',
      provider: 'fake',
      input_tokens: 0,
      output_tokens: 0,
      status: 502,
    });
  });

  it('keeps an upstream 429 as 429 rate_limit_error with its Retry-After', async () => {
    upstream.handle(
      json(
        429,
        { error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' } },
        { 'retry-after': '17' },
      ),
    );
    const res = await post(chatRequest());
    expect(res.status).toBe(429);
    expectRequestId(res);
    expect(res.headers['retry-after']).toBe('17');
    expectOpenAIError(res.body, {
      message: 'Upstream fake is rate limited: Rate limit reached for requests',
      type: 'rate_limit_error',
      param: null,
      code: 'rate_limit_exceeded',
    });
  });

  it('answers a streamed request refused with 429 as a plain JSON error, not a stream', async () => {
    upstream.handle(json(429, { error: { message: 'Slow down' } }, { 'retry-after': '3' }));
    const res = await post(chatRequest({ stream: true }));
    expect(res.status).toBe(429);
    expectRequestId(res);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['retry-after']).toBe('3');
    expectOpenAIError(res.body, {
      message: 'Upstream fake is rate limited: Slow down',
      type: 'rate_limit_error',
      param: null,
      code: 'rate_limit_exceeded',
    });
  });

  it('turns an upstream 500 into 502 upstream_error', async () => {
    upstream.handle(json(500, { error: { message: 'The server had an error while processing your request.' } }));
    const res = await post(chatRequest());
    expect(res.status).toBe(502);
    expectRequestId(res);
    expectOpenAIError(res.body, {
      message: 'Upstream fake failed (500): The server had an error while processing your request.',
      type: 'upstream_error',
      param: null,
      code: 'upstream_error',
    });
  });

  it('turns an upstream 400 into 400 upstream_rejected carrying the upstream reason', async () => {
    upstream.handle(json(400, { error: { message: "Invalid value for 'temperature'." } }));
    const res = await post(chatRequest());
    expect(res.status).toBe(400);
    expectRequestId(res);
    expectOpenAIError(res.body, {
      message: "Upstream fake rejected the request (400): Invalid value for 'temperature'.",
      type: 'invalid_request_error',
      param: null,
      code: 'upstream_rejected',
    });
  });

  it('answers 502 when the upstream cannot be reached', async () => {
    const port = new URL(upstream.origin).port;
    await upstream.close();
    upstream = await startFakeUpstream();
    const closed = await createTestApp({
      providers: [{ ...provider(), base_url: `http://127.0.0.1:${port}/v1` }],
      models: [{ provider: 'fake', model: 'gpt-4.1-mini', type: 'chat', aliases: ['mini'] }],
    });
    try {
      const res = await request(closed.app)
        .post('/v1/chat/completions')
        .set('authorization', `Bearer ${closed.key}`)
        .send(chatRequest());
      expect(res.status).toBe(502);
      expectRequestId(res);
      expectOpenAIError(res.body, {
        message: 'Upstream fake could not be reached (ECONNREFUSED)',
        type: 'upstream_error',
        param: null,
        code: 'upstream_error',
      });
    } finally {
      await closed.registry.close();
    }
  });
});

describe('a model configured with reasoning: false', () => {
  it('drops the reasoning a caller asked for, with a warning, instead of sending reasoning_effort upstream', async () => {
    const upstream = await startFakeUpstream((_request, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(fixture('text.json'));
    });
    try {
      const testApp = await createTestApp({
        providers: [
          {
            id: 'fake',
            type: 'openai-compatible',
            base_url: `${upstream.origin}/v1`,
            timeout_ms: 5000,
            max_connections: 4,
            headers: {},
            responses: 'translate',
          },
        ],
        models: [
          { provider: 'fake', model: 'plain-model', type: 'chat', aliases: ['plain'], reasoning: false },
          { provider: 'fake', model: 'thinking-model', type: 'chat', aliases: ['thinker'] },
        ],
      });
      // Claude Code's shape: Anthropic dialect with output_config.effort, translated to chat completions upstream.
      const ask = (model: string) =>
        request(testApp.app)
          .post('/anthropic/v1/messages')
          .set('x-api-key', testApp.key)
          .send({
            model,
            max_tokens: 64,
            output_config: { effort: 'high' },
            messages: [{ role: 'user', content: 'Hi' }],
          });
      const plain = await ask('plain');
      expect(plain.status).toBe(200);
      expect(upstream.requests[0].body).not.toHaveProperty('reasoning_effort');
      expect(
        testApp.logs.some((line) => line.requestId === plain.headers['x-svc-request-id'] && line.field === 'reasoning'),
      ).toBe(true);
      const thinker = await ask('thinker');
      expect(thinker.status).toBe(200);
      expect(upstream.requests[1].body).toHaveProperty('reasoning_effort', 'high');
    } finally {
      await upstream.close();
    }
  });
});
