/**
 * Native passthrough bills from the wire: the upstream's own usage when it reports it, and a tokenizer count
 * of what it was sent and produced when it reports none (older llama.cpp and LM Studio ignore
 * `include_usage`). Anthropic count_tokens is forwarded to an Anthropic upstream with the caller's betas.
 */
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { sendAnthropicJson } from '../fakes/answers.js';
import { startFakeUpstream, type FakeUpstream } from '../fakes/fake-upstream.js';
import type { ProviderConfig } from '../../server/config.js';
import { countTextTokens } from '../../server/tokens/tokenizer.js';
import { createTestApp, type TestApp } from '../helpers/create-test-app.js';

const fakes: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

function openAIProvider(origin: string): ProviderConfig {
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

async function usageOf(testApp: TestApp, requestId: string) {
  const response = await request(testApp.app)
    .get('/v1/usage')
    .query({ request_id: requestId })
    .set('authorization', `Bearer ${testApp.key}`);
  expect(response.status).toBe(200);
  expect(response.body.data).toHaveLength(1);
  return response.body.data[0] as { input_tokens: number; output_tokens: number; operation: string; provider: string };
}

describe('passthrough usage when the upstream reports none', () => {
  it('counts a streamed chat answer with the tokenizer', async () => {
    const upstream: FakeUpstream = await startFakeUpstream((_request, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (delta: object, finish: string | null) =>
        `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      res.end(
        `${chunk({ role: 'assistant', content: '' }, null) + chunk({ content: 'Bonjour tout ' }, null) + chunk({ content: 'le monde' }, null) + chunk({}, 'stop')}data: [DONE]\n\n`,
      );
    });
    fakes.push(upstream);
    const testApp = await createTestApp({ providers: [openAIProvider(upstream.origin)] });
    const response = await request(testApp.app)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${testApp.key}`)
      .send({ model: 'fake:m', stream: true, messages: [{ role: 'user', content: 'Say hello in French.' }] });
    expect(response.status).toBe(200);
    // The gateway asked the upstream for usage on the caller's behalf...
    expect((upstream.requests[0].body as { stream_options?: unknown }).stream_options).toEqual({ include_usage: true });
    const usage = await usageOf(testApp, response.headers['x-svc-request-id']);
    expect(usage.output_tokens).toBe(await countTextTokens('Bonjour tout le monde'));
    expect(usage.input_tokens).toBeGreaterThan(await countTextTokens('Say hello in French.'));
    expect(usage.provider).toBe('fake');
  });

  it('counts a JSON chat answer without usage with the tokenizer', async () => {
    const upstream = await startFakeUpstream((_request, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'c1',
          object: 'chat.completion',
          created: 1,
          model: 'm',
          choices: [{ index: 0, message: { role: 'assistant', content: 'Four.' }, finish_reason: 'stop' }],
        }),
      );
    });
    fakes.push(upstream);
    const testApp = await createTestApp({ providers: [openAIProvider(upstream.origin)] });
    const response = await request(testApp.app)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${testApp.key}`)
      .send({ model: 'fake:m', messages: [{ role: 'user', content: 'Two plus two?' }] });
    expect(response.status).toBe(200);
    expect(response.body.choices[0].message.content).toBe('Four.');
    const usage = await usageOf(testApp, response.headers['x-svc-request-id']);
    expect(usage.output_tokens).toBe(await countTextTokens('Four.'));
    expect(usage.input_tokens).toBeGreaterThan(0);
  });
});

describe('Anthropic count_tokens on an Anthropic upstream', () => {
  it('is forwarded natively with the caller query and betas, and answers the upstream count', async () => {
    const upstream = await startFakeUpstream();
    fakes.push(upstream);
    upstream.handle((_request, res) => sendAnthropicJson(res, 200, JSON.stringify({ input_tokens: 2095 })));
    const testApp = await createTestApp({
      providers: [
        {
          id: 'claude',
          type: 'anthropic',
          base_url: upstream.origin,
          api_key: 'sk-ant-upstream',
          timeout_ms: 5000,
          max_connections: 4,
          headers: {},
          anthropic_version: '2023-06-01',
        },
      ],
    });
    const response = await request(testApp.app)
      .post('/anthropic/v1/messages/count_tokens?beta=true')
      .set('x-api-key', testApp.key)
      .set('anthropic-version', '2023-06-01')
      .set('anthropic-beta', 'token-counting-2024-11-01')
      .send({
        model: 'claude-haiku-4-5',
        messages: [{ role: 'user', content: 'Hi' }],
        system: [{ type: 'text', text: 'S', cache_control: { type: 'ephemeral' } }],
      });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ input_tokens: 2095 });
    const received = upstream.requests[0];
    expect(received.url).toBe('/v1/messages/count_tokens?beta=true');
    expect(received.headers['anthropic-beta']).toBe('token-counting-2024-11-01');
    expect(received.headers['x-api-key']).toBe('sk-ant-upstream');
    // Untouched but for the model: the cache_control the canonical core would drop reaches the upstream.
    expect(received.body).toEqual({
      model: 'claude-haiku-4-5',
      messages: [{ role: 'user', content: 'Hi' }],
      system: [{ type: 'text', text: 'S', cache_control: { type: 'ephemeral' } }],
    });
  });
});
