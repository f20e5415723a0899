/**
 * Upstream faults never end the process: every failure mode (first SSE event not JSON, connection reset
 * mid-answer, body truncated with a clean end, wrong content type, off-shape JSON, no answer at all) × every
 * caller dialect × every route to an upstream (translated to an OpenAI-compatible upstream, native passthrough
 * to it with `responses: native`, and an Anthropic upstream, which is passthrough for Anthropic callers and
 * translated for the others) × JSON and stream.
 *
 * Each cell asserts that the caller got a clean failure — a 502 (504 for the hang) in its dialect's envelope, or,
 * once a stream had started, the dialect's error event as the last event — and then that the server still
 * answers `/health` and a normal call to the same upstream, and that no 'uncaughtException' or
 * 'unhandledRejection' fired meanwhile (vitest fails the run on those too; the listeners make the cell fail).
 */
import type { ServerResponse } from 'node:http';
import request from 'supertest';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ProviderConfig } from '../../server/config.js';
import { startFakeUpstream, type FakeUpstream } from '../fakes/fake-upstream.js';
import { createTestApp, type TestApp } from '../helpers/create-test-app.js';
import { readSse } from '../helpers/read-sse.js';
import {
  anthropicJson,
  anthropicSse,
  chatCompletionJson,
  chatCompletionSse,
  responsesJson,
  responsesSse,
  writeAnswer,
  type ScriptedAnswer,
  type ScriptedReply,
} from '../matrix/upstream-scripts.js';

type Dialect = 'chat' | 'responses' | 'anthropic';
type Route = 'openai-translate' | 'openai-native' | 'anthropic';
type UpstreamDialect = 'chat' | 'responses' | 'anthropic';
const FAILURES = ['bad-json', 'reset', 'truncated', 'wrong-content-type', 'off-shape', 'hang'] as const;
type Failure = (typeof FAILURES)[number];

/** Short, so a hang is cut quickly; a loopback fake answers well within it even on a busy machine. */
const TIMEOUT_MS = 600;

const MODELS: Record<Route, string> = {
  'openai-translate': 'oai:gpt-4.1-mini',
  'openai-native': 'oain:gpt-4.1-mini',
  anthropic: 'anth:claude-sonnet-4-5',
};
const PATHS: Record<Dialect, string> = {
  chat: '/v1/chat/completions',
  responses: '/v1/responses',
  anthropic: '/anthropic/v1/messages',
};

function isPassthrough(route: Route, dialect: Dialect): boolean {
  return route === 'anthropic'
    ? dialect === 'anthropic'
    : dialect === 'chat' || (route === 'openai-native' && dialect === 'responses');
}

const REPLY: ScriptedReply = {
  text: 'Hello there, friend.',
  finish: 'stop',
  usage: { input: 12, output: 5, cacheRead: 0, cacheWrite: 0, reasoning: 0 },
  model: 'upstream-model',
};

/** A correct answer in the upstream's dialect, for the normal call after each failure. */
function goodAnswer(upstream: UpstreamDialect, body: Record<string, unknown>): ScriptedAnswer {
  const stream = body.stream === true;
  switch (upstream) {
    case 'chat':
      return stream
        ? chatCompletionSse(
            REPLY,
            (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true,
          )
        : chatCompletionJson(REPLY);
    case 'responses':
      return stream ? responsesSse(REPLY) : responsesJson(REPLY);
    case 'anthropic':
      return stream ? anthropicSse(REPLY) : anthropicJson(REPLY);
  }
}

function sseText(events: Array<{ event?: string; data: string }>): string {
  return events.map((event) => `${event.event ? `event: ${event.event}\n` : ''}data: ${event.data}\n\n`).join('');
}

/** Answers with the failure, in the upstream's dialect where the failure has one. */
function writeFailure(
  res: ServerResponse,
  failure: Failure,
  upstream: UpstreamDialect,
  body: Record<string, unknown>,
): void {
  const stream = body.stream === true;
  const good = goodAnswer(upstream, body);
  switch (failure) {
    case 'bad-json':
      if (stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(`${upstream === 'anthropic' ? 'event: message_start\n' : ''}data: not json\n\ndata: [DONE]\n\n`);
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('not json');
      }
      return;
    case 'reset':
      // The headers promise more than comes; then the connection is cut.
      if (stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(sseText(good.events!.slice(0, 2)));
      } else {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(good.body.length) });
        res.write(good.body.slice(0, 40));
      }
      setTimeout(() => res.socket?.destroy(), 20);
      return;
    case 'truncated':
      // A clean end of a body that stops in the middle of the answer.
      res.writeHead(200, { 'content-type': stream ? 'text/event-stream' : 'application/json' });
      res.end(stream ? sseText(good.events!.slice(0, 2)) : good.body.slice(0, 40));
      return;
    case 'wrong-content-type':
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><body><h1>502 Bad Gateway</h1></body></html>');
      return;
    case 'off-shape':
      if (stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(
          `${upstream === 'anthropic' ? 'event: message_start\n' : ''}data: {"unexpected":true}\n\ndata: [DONE]\n\n`,
        );
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"unexpected":true}');
      }
      return;
    case 'hang':
      // Never answers; the configured timeout cuts the call.
      return;
  }
}

function callerBody(dialect: Dialect, model: string, stream: boolean): Record<string, unknown> {
  switch (dialect) {
    case 'chat':
      return { model, stream, messages: [{ role: 'user', content: 'Say hello.' }] };
    case 'responses':
      return { model, stream, input: 'Say hello.' };
    case 'anthropic':
      return { model, stream, max_tokens: 64, messages: [{ role: 'user', content: 'Say hello.' }] };
  }
}

let testApp: TestApp;
let openai: FakeUpstream;
let anthropic: FakeUpstream;
let mode: Failure | 'good' = 'good';
const crashes: unknown[] = [];
const onCrash = (error: unknown) => crashes.push(error);

beforeAll(async () => {
  process.on('uncaughtException', onCrash);
  process.on('unhandledRejection', onCrash);
  openai = await startFakeUpstream();
  anthropic = await startFakeUpstream();
  openai.handle((recorded, res) => {
    const body = recorded.body as Record<string, unknown>;
    const upstream: UpstreamDialect = recorded.url.endsWith('/responses') ? 'responses' : 'chat';
    return mode === 'good' ? writeAnswer(res, goodAnswer(upstream, body)) : writeFailure(res, mode, upstream, body);
  });
  anthropic.handle((recorded, res) => {
    const body = recorded.body as Record<string, unknown>;
    return mode === 'good'
      ? writeAnswer(res, goodAnswer('anthropic', body))
      : writeFailure(res, mode, 'anthropic', body);
  });
  const common = { timeout_ms: TIMEOUT_MS, max_connections: 4, headers: {} };
  const providers: ProviderConfig[] = [
    { id: 'oai', type: 'openai-compatible', base_url: `${openai.origin}/v1`, responses: 'translate', ...common },
    { id: 'oain', type: 'openai-compatible', base_url: `${openai.origin}/v1`, responses: 'native', ...common },
    {
      id: 'anth',
      type: 'anthropic',
      base_url: anthropic.origin,
      api_key: 'sk-ant-upstream',
      anthropic_version: '2023-06-01',
      ...common,
    },
  ];
  testApp = await createTestApp({ providers });
});

afterAll(async () => {
  process.off('uncaughtException', onCrash);
  process.off('unhandledRejection', onCrash);
  await Promise.all([openai.close(), anthropic.close()]);
});

afterEach(() => {
  mode = 'good';
  crashes.splice(0);
});

function call(dialect: Dialect, body: Record<string, unknown>) {
  const headers: Record<string, string> =
    dialect === 'anthropic'
      ? { 'x-api-key': testApp.key, 'anthropic-version': '2023-06-01' }
      : { authorization: `Bearer ${testApp.key}` };
  return request(testApp.app).post(PATHS[dialect]).set(headers).send(body);
}

/** The dialect's error envelope (HTTP) or error event payload, with the status or code it carries. */
function assertErrorPayload(dialect: Dialect, payload: Record<string, any>): void {
  if (dialect === 'anthropic') {
    expect(payload.type).toBe('error');
    expect(typeof payload.error.message).toBe('string');
  } else if (dialect === 'responses' && payload.type === 'error') {
    // The Responses `error` event (passthrough) or `response.failed` (translated) both carry a message.
    expect(typeof payload.message).toBe('string');
  } else if (dialect === 'responses' && payload.type === 'response.failed') {
    expect(typeof payload.response.error.message).toBe('string');
  } else {
    expect(typeof payload.error.message).toBe('string');
  }
}

/**
 * What each cell may answer. Translated streams await their first part before any header, so an upstream that
 * fails before producing one is a plain 502; a passthrough stream has started once the upstream's SSE headers
 * arrived, so it reports the failure as an error event.
 */
function expectCleanFailure(
  dialect: Dialect,
  route: Route,
  stream: boolean,
  failure: Failure,
  response: request.Response,
): void {
  if (failure === 'hang') {
    expect(response.status).toBe(504);
    assertErrorPayload(dialect, response.body as Record<string, any>);
    return;
  }
  if (response.status !== 200) {
    expect(response.status).toBe(502);
    assertErrorPayload(dialect, response.body as Record<string, any>);
    if (
      ['bad-json', 'truncated', 'wrong-content-type', 'off-shape'].includes(failure) &&
      isPassthrough(route, dialect) &&
      !stream
    ) {
      // Anthropic's envelope has no code, only a type; the OpenAI dialects' must carry this one.
      const { error } = response.body as { error: { code?: string; type: string } };
      expect(dialect === 'anthropic' ? error.type : error.code).toBe(
        dialect === 'anthropic' ? 'api_error' : 'upstream_invalid_response',
      );
    }
    return;
  }
  // A 200 is only acceptable for a stream that ended with the dialect's error event.
  expect(stream, `a JSON call answered 200 to ${failure}`).toBe(true);
  expect(response.headers['content-type']).toContain('text/event-stream');
  const events = readSse(response.text).filter((event) => event.data !== '[DONE]');
  const last = events[events.length - 1];
  expect(last, 'the stream carries no event').toBeDefined();
  assertErrorPayload(dialect, JSON.parse(last.data) as Record<string, any>);
}

/** Stream failures a passthrough stream cannot see without validating every event (documented in README). */
function relayedAsIs(route: Route, dialect: Dialect, stream: boolean, failure: Failure): boolean {
  return stream && isPassthrough(route, dialect) && (failure === 'truncated' || failure === 'off-shape');
}

async function assertStillServing(dialect: Dialect, route: Route, stream: boolean): Promise<void> {
  mode = 'good';
  const health = await request(testApp.app).get('/health');
  expect(health.status).toBe(200);
  const normal = await call(dialect, callerBody(dialect, MODELS[route], stream));
  expect(normal.status).toBe(200);
  expect(normal.text).toContain('Hello');
  expect(crashes).toEqual([]);
}

const ROUTES: Route[] = ['openai-translate', 'openai-native', 'anthropic'];
const DIALECTS: Dialect[] = ['chat', 'responses', 'anthropic'];

describe.each(FAILURES)('upstream failure: %s', (failure) => {
  for (const route of ROUTES) {
    for (const dialect of DIALECTS) {
      for (const stream of [false, true]) {
        const name = `${dialect} → ${route} (${isPassthrough(route, dialect) ? 'passthrough' : 'translated'}), ${stream ? 'stream' : 'JSON'}`;
        it(name, async () => {
          mode = failure;
          const response = await call(dialect, callerBody(dialect, MODELS[route], stream));
          if (relayedAsIs(route, dialect, stream, failure)) {
            expect(response.status).toBe(200);
          } else {
            expectCleanFailure(dialect, route, stream, failure, response);
          }
          await assertStillServing(dialect, route, stream);
        });
      }
    }
  }
});
