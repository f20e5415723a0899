/**
 * Reasoning and prompt-cache accounting across dialects, against upstreams that emit them:
 *
 * - an Anthropic upstream streaming `thinking` + `signature_delta` + text, with `cache_read_input_tokens` /
 *   `cache_creation_input_tokens` in `message_start`, read through chat completions (`reasoning_content`,
 *   `prompt_tokens_details.cached_tokens`), Responses (reasoning summary events,
 *   `input_tokens_details.cached_tokens`) and the Anthropic dialect itself (native passthrough);
 * - an OpenAI-compatible upstream emitting `reasoning_content` and `cached_tokens`, read through the
 *   Anthropic dialect (thinking blocks, `cache_read_input_tokens`) and Responses.
 *
 * Each case checks that the reasoning never leaks into the assistant text, arrives before the text, and that
 * the usage record (`GET /v1/usage?request_id=`) keeps the cache tokens. Real SDKs read the same answers last.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, streamText, type LanguageModel } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeUpstream } from '../fakes/fake-upstream.js';
import { sseJson } from '../helpers/read-sse.js';
import { FAKE_CACHE, FAKE_REASONING, startAnthropicFake, startOpenAIFake } from './support/fakes.js';
import { fakeProviders, startGateway, type Gateway } from './support/gateway.js';

const ANTHROPIC_THINKER = 'anth:claude-think-1';
const OPENAI_THINKER = 'oai:gpt-think-1';

let anthropic: FakeUpstream;
let openai: FakeUpstream;
let gateway: Gateway;

beforeAll(async () => {
  anthropic = await startAnthropicFake();
  openai = await startOpenAIFake();
  gateway = await startGateway({ providers: fakeProviders({ anthropic: anthropic.origin, openai: openai.origin }) });
});

afterAll(async () => {
  await gateway?.close();
  await anthropic?.close();
  await openai?.close();
});

async function post(
  path: string,
  body: Record<string, unknown>,
): Promise<{ requestId: string; status: number; text: string }> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    authorization: `Bearer ${gateway.key}`,
  };
  if (path.startsWith('/anthropic')) {
    headers['anthropic-version'] = '2023-06-01';
  }
  const response = await fetch(`${gateway.origin}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  return {
    requestId: response.headers.get('x-svc-request-id') ?? '',
    status: response.status,
    text: await response.text(),
  };
}

/**
 * Indexes of the first and last event matching each predicate, to check order. At least one event must match:
 * an order check between a missing span (-1) and a present one would pass for nothing.
 */
function span<T>(events: T[], match: (event: T) => boolean): { first: number; last: number } {
  const first = events.findIndex(match);
  expect(first, 'no event of this kind').toBeGreaterThanOrEqual(0);
  let last = -1;
  events.forEach((event, index) => {
    if (match(event)) {
      last = index;
    }
  });
  return { first, last };
}

describe('Anthropic upstream with thinking and cache tokens', () => {
  it('through chat completions: reasoning_content first, cached_tokens in usage and in the usage record', async () => {
    const { requestId, status, text } = await post('/v1/chat/completions', {
      model: ANTHROPIC_THINKER,
      messages: [{ role: 'user', content: 'Think, then answer' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(status, text).toBe(200);
    const chunks = sseJson(text).map(
      (event) =>
        event.data as {
          choices: Array<{ delta: { content?: string | null; reasoning_content?: string } }>;
          usage?: Record<string, unknown> | null;
        },
    );
    const deltas = chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.delta));
    const reasoning = span(deltas, (delta) => Boolean(delta.reasoning_content));
    const content = span(deltas, (delta) => Boolean(delta.content));
    expect(deltas.map((delta) => delta.reasoning_content ?? '').join('')).toBe(FAKE_REASONING);
    const answer = deltas.map((delta) => delta.content ?? '').join('');
    expect(answer).toContain('Anthropic fake says: Think, then answer');
    expect(answer).not.toContain('Fake reasoning');
    expect(reasoning.first).toBeGreaterThanOrEqual(0);
    expect(reasoning.last).toBeLessThan(content.first);
    const usage = chunks.find((chunk) => chunk.usage)?.usage as {
      prompt_tokens: number;
      prompt_tokens_details?: { cached_tokens?: number };
    };
    expect(usage.prompt_tokens_details?.cached_tokens).toBe(FAKE_CACHE.read);
    expect(usage.prompt_tokens).toBeGreaterThanOrEqual(FAKE_CACHE.read + FAKE_CACHE.write);
    const record = await gateway.usage(requestId);
    expect(record).toMatchObject({
      cached_input_tokens: FAKE_CACHE.read,
      cache_write_tokens: FAKE_CACHE.write,
      status: 200,
    });
  });

  it('through chat completions without streaming: reasoning_content beside the content', async () => {
    const { requestId, status, text } = await post('/v1/chat/completions', {
      model: ANTHROPIC_THINKER,
      messages: [{ role: 'user', content: 'Think quietly' }],
    });
    expect(status, text).toBe(200);
    const body = JSON.parse(text) as {
      choices: Array<{ message: { content: string; reasoning_content?: string } }>;
      usage: { prompt_tokens_details?: { cached_tokens?: number } };
    };
    expect(body.choices[0].message.reasoning_content).toBe(FAKE_REASONING);
    expect(body.choices[0].message.content).toContain('Anthropic fake says: Think quietly');
    expect(body.choices[0].message.content).not.toContain('Fake reasoning');
    expect(body.usage.prompt_tokens_details?.cached_tokens).toBe(FAKE_CACHE.read);
    expect(await gateway.usage(requestId)).toMatchObject({
      cached_input_tokens: FAKE_CACHE.read,
      cache_write_tokens: FAKE_CACHE.write,
    });
  });

  it('through Responses: reasoning summary events first, cached_tokens in usage and in the usage record', async () => {
    const { requestId, status, text } = await post('/v1/responses', {
      model: ANTHROPIC_THINKER,
      input: 'Think, then answer',
      stream: true,
    });
    expect(status, text).toBe(200);
    const events = sseJson(text).map(
      (event) =>
        event.data as {
          type: string;
          delta?: string;
          response?: { usage?: Record<string, unknown>; output?: Array<{ type: string }> };
        },
    );
    const reasoning = span(
      events,
      (event) =>
        event.type === 'response.reasoning_summary_text.delta' || event.type === 'response.reasoning_text.delta',
    );
    const output = span(events, (event) => event.type === 'response.output_text.delta');
    expect(reasoning.first).toBeGreaterThanOrEqual(0);
    expect(reasoning.last).toBeLessThan(output.first);
    expect(
      events
        .filter((event) => event.type.startsWith('response.reasoning_'))
        .filter((event) => event.delta)
        .map((event) => event.delta)
        .join(''),
    ).toBe(FAKE_REASONING);
    const answer = events
      .filter((event) => event.type === 'response.output_text.delta')
      .map((event) => event.delta)
      .join('');
    expect(answer).toContain('Anthropic fake says: Think, then answer');
    expect(answer).not.toContain('Fake reasoning');
    const completed = events.find((event) => event.type === 'response.completed');
    expect(completed?.response?.output?.map((item) => item.type)).toEqual(['reasoning', 'message']);
    const usage = completed?.response?.usage as {
      input_tokens: number;
      input_tokens_details?: { cached_tokens?: number };
    };
    expect(usage.input_tokens_details?.cached_tokens).toBe(FAKE_CACHE.read);
    expect(await gateway.usage(requestId)).toMatchObject({
      cached_input_tokens: FAKE_CACHE.read,
      cache_write_tokens: FAKE_CACHE.write,
    });
  });

  it('natively (Anthropic dialect): thinking, signature and cache usage pass through, and are recorded', async () => {
    const { requestId, status, text } = await post('/anthropic/v1/messages', {
      model: ANTHROPIC_THINKER,
      max_tokens: 2048,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [{ role: 'user', content: 'Think, then answer' }],
      stream: true,
    });
    expect(status, text).toBe(200);
    const events = sseJson(text).map(
      (event) =>
        event.data as {
          type: string;
          message?: { usage: Record<string, number> };
          delta?: { type: string; thinking?: string; text?: string; signature?: string };
        },
    );
    const start = events.find((event) => event.type === 'message_start');
    expect(start?.message?.usage).toMatchObject({
      cache_read_input_tokens: FAKE_CACHE.read,
      cache_creation_input_tokens: FAKE_CACHE.write,
    });
    const thinking = span(events, (event) => event.delta?.type === 'thinking_delta');
    const signature = span(events, (event) => event.delta?.type === 'signature_delta');
    const textDeltas = span(events, (event) => event.delta?.type === 'text_delta');
    expect(thinking.last).toBeLessThan(signature.first);
    expect(signature.last).toBeLessThan(textDeltas.first);
    const answer = events
      .filter((event) => event.delta?.type === 'text_delta')
      .map((event) => event.delta!.text)
      .join('');
    expect(answer).toContain('Anthropic fake says: Think, then answer');
    expect(answer).not.toContain('Fake reasoning');
    expect(await gateway.usage(requestId)).toMatchObject({
      cached_input_tokens: FAKE_CACHE.read,
      cache_write_tokens: FAKE_CACHE.write,
    });
  });
});

describe('OpenAI-compatible upstream with reasoning_content and cached tokens', () => {
  it('through the Anthropic dialect (stream): a thinking block first, cache_read_input_tokens reported and recorded', async () => {
    const { requestId, status, text } = await post('/anthropic/v1/messages', {
      model: OPENAI_THINKER,
      max_tokens: 1024,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Think, then answer' }] }],
      stream: true,
    });
    expect(status, text).toBe(200);
    const events = sseJson(text).map(
      (event) =>
        event.data as {
          type: string;
          index?: number;
          content_block?: { type: string };
          message?: { usage: Record<string, number | null> };
          delta?: { type?: string; thinking?: string; text?: string };
          usage?: Record<string, number | null>;
        },
    );
    const blocks = events
      .filter((event) => event.type === 'content_block_start')
      .map((event) => event.content_block!.type);
    expect(blocks).toEqual(['thinking', 'text']);
    const thinking = span(events, (event) => event.delta?.type === 'thinking_delta');
    const textDeltas = span(events, (event) => event.delta?.type === 'text_delta');
    expect(thinking.last).toBeLessThan(textDeltas.first);
    expect(
      events
        .filter((event) => event.delta?.type === 'thinking_delta')
        .map((event) => event.delta!.thinking)
        .join(''),
    ).toBe(FAKE_REASONING);
    const answer = events
      .filter((event) => event.delta?.type === 'text_delta')
      .map((event) => event.delta!.text)
      .join('');
    expect(answer).toContain('OpenAI fake says: Think, then answer');
    expect(answer).not.toContain('Fake reasoning');
    const start = events.find((event) => event.type === 'message_start');
    // An estimate (the upstream reports its usage only at the end), but a count, not a key without a value.
    expect(start?.message?.usage?.input_tokens).toBeGreaterThan(0);
    // The upstream reports its usage only at the end, so the cache count arrives in message_delta.
    const reported = [
      start?.message?.usage?.cache_read_input_tokens,
      events.find((event) => event.type === 'message_delta')?.usage?.cache_read_input_tokens,
    ];
    expect(reported).toContain(FAKE_CACHE.read);
    expect(events[events.length - 1].type).toBe('message_stop');
    expect(await gateway.usage(requestId)).toMatchObject({
      cached_input_tokens: FAKE_CACHE.read,
      reasoning_tokens: 12,
    });
  });

  it('through the Anthropic dialect (JSON): thinking block before text, cache_read_input_tokens in usage', async () => {
    const { requestId, status, text } = await post('/anthropic/v1/messages', {
      model: OPENAI_THINKER,
      max_tokens: 1024,
      messages: [{ role: 'user', content: 'Think quietly' }],
    });
    expect(status, text).toBe(200);
    const body = JSON.parse(text) as {
      content: Array<{ type: string; thinking?: string; text?: string }>;
      usage: Record<string, number | null>;
    };
    expect(body.content.map((block) => block.type)).toEqual(['thinking', 'text']);
    expect(body.content[0].thinking).toBe(FAKE_REASONING);
    expect(body.content[1].text).toContain('OpenAI fake says: Think quietly');
    expect(body.content[1].text).not.toContain('Fake reasoning');
    expect(body.usage.cache_read_input_tokens).toBe(FAKE_CACHE.read);
    expect(await gateway.usage(requestId)).toMatchObject({ cached_input_tokens: FAKE_CACHE.read });
  });

  it('through Responses: reasoning summary before the text, cached_tokens in usage', async () => {
    const { requestId, status, text } = await post('/v1/responses', {
      model: OPENAI_THINKER,
      input: 'Think, then answer',
      stream: true,
    });
    expect(status, text).toBe(200);
    const events = sseJson(text).map(
      (event) =>
        event.data as {
          type: string;
          delta?: string;
          response?: {
            usage?: {
              input_tokens_details?: { cached_tokens?: number };
              output_tokens_details?: { reasoning_tokens?: number };
            };
          };
        },
    );
    const reasoning = span(events, (event) => event.type === 'response.reasoning_summary_text.delta');
    const output = span(events, (event) => event.type === 'response.output_text.delta');
    expect(reasoning.first).toBeGreaterThanOrEqual(0);
    expect(reasoning.last).toBeLessThan(output.first);
    const answer = events
      .filter((event) => event.type === 'response.output_text.delta')
      .map((event) => event.delta)
      .join('');
    expect(answer).toContain('OpenAI fake says: Think, then answer');
    expect(answer).not.toContain('Fake reasoning');
    const usage = events.find((event) => event.type === 'response.completed')?.response?.usage;
    expect(usage?.input_tokens_details?.cached_tokens).toBe(FAKE_CACHE.read);
    expect(usage?.output_tokens_details?.reasoning_tokens).toBe(12);
    expect(await gateway.usage(requestId)).toMatchObject({
      cached_input_tokens: FAKE_CACHE.read,
      reasoning_tokens: 12,
    });
  });
});

describe('real SDKs read the reasoning apart from the text', () => {
  /** `writesVisible`: the SDK reads a dialect whose usage has a cache-write field (Anthropic's). */
  const cases: Array<{
    name: string;
    model: () => LanguageModel;
    upstream: 'anthropic' | 'openai';
    writesVisible: boolean;
  }> = [
    {
      name: '@ai-sdk/anthropic ← OpenAI-compatible upstream',
      model: () => createAnthropic({ baseURL: `${gateway.origin}/anthropic/v1`, apiKey: gateway.key })(OPENAI_THINKER),
      upstream: 'openai',
      writesVisible: true,
    },
    {
      name: '@ai-sdk/anthropic ← Anthropic upstream',
      model: () =>
        createAnthropic({ baseURL: `${gateway.origin}/anthropic/v1`, apiKey: gateway.key })(ANTHROPIC_THINKER),
      upstream: 'anthropic',
      writesVisible: true,
    },
    {
      name: '@ai-sdk/openai Responses ← Anthropic upstream',
      model: () => createOpenAI({ baseURL: `${gateway.origin}/v1`, apiKey: gateway.key })(ANTHROPIC_THINKER),
      upstream: 'anthropic',
      writesVisible: false,
    },
    {
      name: '@ai-sdk/openai-compatible ← Anthropic upstream',
      model: () =>
        createOpenAICompatible({
          name: 'omnigate',
          baseURL: `${gateway.origin}/v1`,
          apiKey: gateway.key,
          includeUsage: true,
        }).chatModel(ANTHROPIC_THINKER),
      upstream: 'anthropic',
      writesVisible: false,
    },
  ];

  it.each(cases)('$name: generateText', async ({ model, upstream, writesVisible }) => {
    const result = await generateText({ model: model(), prompt: 'Think, then answer' });
    expect(result.reasoningText).toBe(FAKE_REASONING);
    expect(result.text).not.toContain('Fake reasoning');
    expect(result.text).toContain('says: Think, then answer');
    expect(result.usage.inputTokenDetails.cacheReadTokens).toBe(FAKE_CACHE.read);
    // Cache writes have a field in Anthropic's usage only: through it the SDK reports the upstream's count (0 from
    // an upstream that reports none), through OpenAI's dialects it has none to read (undefined, never a number).
    const writes = upstream === 'anthropic' ? FAKE_CACHE.write : 0;
    expect(result.usage.inputTokenDetails.cacheWriteTokens).toBe(writesVisible ? writes : undefined);
  });

  it.each(cases)('$name: streamText', async ({ model }) => {
    const result = streamText({ model: model(), prompt: 'Think, then stream' });
    const kinds: string[] = [];
    for await (const part of result.fullStream) {
      if (part.type === 'reasoning-delta' || part.type === 'text-delta') {
        kinds.push(part.type);
      }
    }
    expect(kinds.lastIndexOf('reasoning-delta')).toBeLessThan(kinds.indexOf('text-delta'));
    expect(await result.reasoningText).toBe(FAKE_REASONING);
    expect(await result.text).not.toContain('Fake reasoning');
    expect((await result.usage).inputTokenDetails.cacheReadTokens).toBe(FAKE_CACHE.read);
  });
});
