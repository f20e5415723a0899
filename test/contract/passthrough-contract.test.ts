/**
 * What native passthrough checks at run time before it relays an upstream's answer (the README's list):
 * a JSON answer must be JSON and fit the open reading of the operation's 200 schema — required fields, their
 * types and `const` values; extra fields, new enum values and new block types pass — and each streamed
 * event's data must be JSON. A rejected answer is a 502 `upstream_invalid_response` (or the dialect's error
 * event once the stream started), logged at warn with the request id and the first schema errors, and its
 * usage record carries the 502.
 */
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import type { ProviderConfig } from '../../server/config.js';
import { sendAnthropicJson } from '../fakes/answers.js';
import { startFakeUpstream } from '../fakes/fake-upstream.js';
import { createTestApp, type TestApp } from '../helpers/create-test-app.js';
import { readSse } from '../helpers/read-sse.js';

const fakes: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

const COMPLETION = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1767225601,
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Four.' }, finish_reason: 'stop' }],
};

const MESSAGE = {
  id: 'msg_01',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  content: [{ type: 'text', text: 'Four.' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 10, output_tokens: 2 },
};

async function openAIApp(
  answer: (res: import('node:http').ServerResponse) => void,
  responses: 'translate' | 'native' = 'translate',
): Promise<TestApp> {
  const upstream = await startFakeUpstream((_request, res) => answer(res));
  fakes.push(upstream);
  const provider: ProviderConfig = {
    id: 'fake',
    type: 'openai-compatible',
    base_url: `${upstream.origin}/v1`,
    timeout_ms: 5000,
    max_connections: 4,
    headers: {},
    responses,
  };
  return createTestApp({ providers: [provider] });
}

async function anthropicApp(body: unknown): Promise<TestApp> {
  const upstream = await startFakeUpstream();
  fakes.push(upstream);
  upstream.handle((_request, res) => sendAnthropicJson(res, 200, JSON.stringify(body)));
  const provider: ProviderConfig = {
    id: 'claude',
    type: 'anthropic',
    base_url: upstream.origin,
    api_key: 'sk-ant-upstream',
    timeout_ms: 5000,
    max_connections: 4,
    headers: {},
    anthropic_version: '2023-06-01',
  };
  return createTestApp({ providers: [provider] });
}

function chat(testApp: TestApp, stream = false) {
  return request(testApp.app)
    .post('/v1/chat/completions')
    .set('authorization', `Bearer ${testApp.key}`)
    .send({ model: 'fake:m', stream, messages: [{ role: 'user', content: 'Two plus two?' }] });
}

function messages(testApp: TestApp) {
  return request(testApp.app)
    .post('/anthropic/v1/messages')
    .set({ 'x-api-key': testApp.key, 'anthropic-version': '2023-06-01' })
    .send({
      model: 'claude:claude-sonnet-4-5',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Two plus two?' }],
    });
}

async function recordedStatus(testApp: TestApp, requestId: string): Promise<number> {
  // The recorder flushes every 10 ms in tests.
  await new Promise((resolve) => setTimeout(resolve, 30));
  const usage = await request(testApp.app)
    .get('/v1/usage')
    .query({ request_id: requestId })
    .set('authorization', `Bearer ${testApp.key}`);
  expect(usage.body.data).toHaveLength(1);
  return (usage.body.data[0] as { status: number }).status;
}

function rejectionLog(testApp: TestApp, requestId: string): Record<string, unknown> {
  const line = testApp.logs.find(
    (entry) => entry.requestId === requestId && String(entry.msg).startsWith('passthrough answer rejected'),
  );
  expect(line, 'no rejection log line').toBeDefined();
  expect(line!.level).toBe(40); // warn
  return line!;
}

function sendText(res: import('node:http').ServerResponse, body: string, contentType = 'application/json'): void {
  res.writeHead(200, { 'content-type': contentType });
  res.end(body);
}

describe('passthrough JSON answers are checked against the open contract', () => {
  it('relays an answer with fields our schema does not list, byte for byte (service_tier, vLLM extras, no usage)', async () => {
    const body = JSON.stringify({
      ...COMPLETION,
      service_tier: 'default',
      prompt_logprobs: null,
      kv_transfer_params: null,
      choices: [{ ...COMPLETION.choices[0], stop_reason: null }],
    });
    const testApp = await openAIApp((res) => sendText(res, body));
    const response = await chat(testApp);
    expect(response.status).toBe(200);
    expect(response.text).toBe(body);
  });

  it('answers 502 upstream_invalid_response for an answer without choices, logs the schema error and records the 502', async () => {
    const { choices: _omitted, ...withoutChoices } = COMPLETION;
    const testApp = await openAIApp((res) => sendText(res, JSON.stringify(withoutChoices)));
    const response = await chat(testApp);
    expect(response.status).toBe(502);
    expect(response.body.error).toMatchObject({ type: 'upstream_error', code: 'upstream_invalid_response' });
    const requestId = response.headers['x-svc-request-id'] as string;
    const log = rejectionLog(testApp, requestId);
    expect(log.errors).toEqual(["/ must have required property 'choices'"]);
    expect(await recordedStatus(testApp, requestId)).toBe(502);
  });

  it('answers 502 for a field of the wrong type, with at most three errors of bounded size in the log', async () => {
    const testApp = await openAIApp((res) =>
      sendText(res, JSON.stringify({ ...COMPLETION, created: 'yesterday', choices: 'none' })),
    );
    const response = await chat(testApp);
    expect(response.status).toBe(502);
    expect(response.body.error.code).toBe('upstream_invalid_response');
    const errors = rejectionLog(testApp, response.headers['x-svc-request-id'] as string).errors as string[];
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.length).toBeLessThanOrEqual(3);
    expect(errors.every((error) => error.length <= 200)).toBe(true);
    expect(errors[0]).toMatch(/must be (integer|array)/);
  });

  it('answers 502 for a body that is not JSON, truncated JSON, or not JSON by its content type', async () => {
    for (const [body, contentType] of [
      ['<html>oops</html>', 'application/json'],
      [JSON.stringify(COMPLETION).slice(0, 50), 'application/json'],
      [JSON.stringify(COMPLETION), 'text/plain'],
    ]) {
      const testApp = await openAIApp((res) => sendText(res, body, contentType));
      const response = await chat(testApp);
      expect(response.status).toBe(502);
      expect(response.body.error.code).toBe('upstream_invalid_response');
      expect(await recordedStatus(testApp, response.headers['x-svc-request-id'] as string)).toBe(502);
    }
  });

  it('answers 502 for a Responses answer that is something else (const object/type values are kept)', async () => {
    const testApp = await openAIApp((res) => sendText(res, JSON.stringify(COMPLETION)), 'native');
    const response = await request(testApp.app)
      .post('/v1/responses')
      .set('authorization', `Bearer ${testApp.key}`)
      .send({ model: 'fake:m', input: 'Two plus two?' });
    expect(response.status).toBe(502);
    expect(response.body.error.code).toBe('upstream_invalid_response');
  });

  it('relays an Anthropic answer with a block type and stop reason our schema does not know', async () => {
    const body = {
      ...MESSAGE,
      stop_reason: 'model_context_window_exceeded',
      content: [...MESSAGE.content, { type: 'container_upload', file_id: 'file_01' }],
    };
    const testApp = await anthropicApp(body);
    const response = await messages(testApp);
    expect(response.status).toBe(200);
    expect(response.body).toEqual(body);
  });

  it('answers an Anthropic caller 502 in its own envelope for a message without content', async () => {
    const { content: _omitted, ...withoutContent } = MESSAGE;
    const testApp = await anthropicApp(withoutContent);
    const response = await messages(testApp);
    expect(response.status).toBe(502);
    expect(response.body).toMatchObject({ type: 'error', error: { type: 'api_error' } });
    expect(await recordedStatus(testApp, response.headers['x-svc-request-id'] as string)).toBe(502);
  });
});

describe('passthrough streams', () => {
  it('end with the error event, without [DONE], at an event whose data is not JSON; earlier events were relayed', async () => {
    const first = JSON.stringify({
      id: 'c1',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'm',
      choices: [{ index: 0, delta: { content: 'Fo' }, finish_reason: null }],
    });
    const testApp = await openAIApp((res) =>
      sendText(res, `data: ${first}\n\ndata: {"truncated\n\ndata: [DONE]\n\n`, 'text/event-stream'),
    );
    const response = await chat(testApp, true);
    expect(response.status).toBe(200);
    const events = readSse(response.text);
    expect(events.map((event) => event.data)).toHaveLength(2);
    expect(events[0].data).toBe(first);
    expect(JSON.parse(events[1].data)).toMatchObject({ error: { code: 'upstream_invalid_response' } });
    const requestId = response.headers['x-svc-request-id'] as string;
    rejectionLog(testApp, requestId);
    expect(await recordedStatus(testApp, requestId)).toBe(502);
  });

  it('relay events that are JSON without checking them against the event schema (per-event cost)', async () => {
    const testApp = await openAIApp((res) =>
      sendText(res, 'data: {"unexpected":true}\n\ndata: [DONE]\n\n', 'text/event-stream'),
    );
    const response = await chat(testApp, true);
    expect(response.status).toBe(200);
    expect(readSse(response.text).map((event) => event.data)).toEqual(['{"unexpected":true}', '[DONE]']);
  });
});
