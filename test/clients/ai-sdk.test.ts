/**
 * The Vercel AI SDK (`ai` 6 with `@ai-sdk/openai`, `@ai-sdk/openai-compatible`, `@ai-sdk/anthropic`) pointed
 * at Omnigate, unmodified: generateText, streamText, multi-step tool loops with an `execute` tool, the
 * next turn built from `response.messages` (on Responses this sends `item_reference` items), and
 * `previousResponseId`, against the reference model and each fake upstream.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, stepCountIs, streamText, tool, type LanguageModel, type ModelMessage } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BACKENDS, startBackend, type Backend } from './support/backends.js';

type ProviderName = 'openai-responses' | 'openai-chat' | 'openai-compatible' | 'anthropic';
const PROVIDERS: ProviderName[] = ['openai-responses', 'openai-chat', 'openai-compatible', 'anthropic'];

/** Request bodies the SDK sent, newest last (the SDK's own fetch, recorded). */
const sent: Array<Record<string, unknown>> = [];
const recordingFetch: typeof fetch = async (input, init) => {
  if (typeof init?.body === 'string') {
    sent.push(JSON.parse(init.body) as Record<string, unknown>);
  }
  return fetch(input, init);
};

function modelFor(provider: ProviderName, origin: string, key: string): LanguageModel {
  switch (provider) {
    case 'openai-responses':
      return createOpenAI({ baseURL: `${origin}/v1`, apiKey: key, fetch: recordingFetch })('gpt-4o-mini');
    case 'openai-chat':
      return createOpenAI({ baseURL: `${origin}/v1`, apiKey: key }).chat('gpt-4o-mini');
    case 'openai-compatible':
      return createOpenAICompatible({
        name: 'omnigate',
        baseURL: `${origin}/v1`,
        apiKey: key,
        includeUsage: true,
      }).chatModel('gpt-4o-mini');
    case 'anthropic':
      return createAnthropic({ baseURL: `${origin}/anthropic/v1`, apiKey: key })('claude-sonnet-4-5');
  }
}

function secretTool(calls: string[]) {
  return {
    get_secret: tool({
      description: 'Returns the secret of a name.',
      inputSchema: z.object({ name: z.string() }),
      execute: async ({ name }) => {
        calls.push(name);
        return `secret-for-${name}`;
      },
    }),
  };
}

describe.each(BACKENDS)('AI SDK via %s', (backendName) => {
  let backend: Backend;

  beforeAll(async () => {
    backend = await startBackend(backendName);
  });

  afterAll(async () => {
    await backend?.close();
  });

  describe.each(PROVIDERS)('%s', (provider) => {
    const model = () => modelFor(provider, backend.gateway.origin, backend.gateway.key);

    it('generateText answers a plain prompt with usage', async () => {
      const result = await generateText({ model: model(), prompt: 'Hello from the AI SDK' });
      expect(result.text).toContain(backend.echo);
      expect(result.text).toContain('Hello from the AI SDK');
      expect(result.finishReason).toBe('stop');
      expect(result.usage.inputTokens).toBeGreaterThan(0);
      expect(result.usage.outputTokens).toBeGreaterThan(0);
    });

    it('streamText streams the reply in pieces', async () => {
      const result = streamText({ model: model(), prompt: 'Stream a reply to this message please' });
      const pieces: string[] = [];
      for await (const piece of result.textStream) {
        pieces.push(piece);
      }
      const text = pieces.join('');
      expect(text).toContain('Stream a reply to this message please');
      expect(pieces.length).toBeGreaterThan(1);
      expect(await result.finishReason).toBe('stop');
      expect((await result.usage).outputTokens).toBeGreaterThan(0);
    });

    it('generateText runs a multi-step tool loop', async () => {
      const calls: string[] = [];
      const result = await generateText({
        model: model(),
        prompt: 'call get_secret {"name":"omnigate"}',
        tools: secretTool(calls),
        stopWhen: stepCountIs(3),
      });
      expect(calls).toEqual(['omnigate']);
      expect(result.steps).toHaveLength(2);
      expect(result.steps[0].finishReason).toBe('tool-calls');
      expect(result.text).toContain(backend.toolReport('get_secret'));
      expect(result.text).toContain('secret-for-omnigate');
    });

    it('streamText runs a multi-step tool loop', async () => {
      const calls: string[] = [];
      const result = streamText({
        model: model(),
        prompt: 'call get_secret {"name":"streamer"}',
        tools: secretTool(calls),
        stopWhen: stepCountIs(3),
      });
      let text = '';
      for await (const piece of result.textStream) {
        text += piece;
      }
      expect(calls).toEqual(['streamer']);
      expect((await result.steps).length).toBe(2);
      expect(text).toContain('secret-for-streamer');
    });

    it('continues a conversation from response.messages', async () => {
      const calls: string[] = [];
      const tools = secretTool(calls);
      const first = await generateText({
        model: model(),
        prompt: 'call get_secret {"name":"history"}',
        tools,
        stopWhen: stepCountIs(3),
      });
      expect(first.text).toContain('secret-for-history');
      const messages: ModelMessage[] = [
        { role: 'user', content: 'call get_secret {"name":"history"}' },
        ...first.response.messages,
        { role: 'user', content: 'Thanks, that was the second turn' },
      ];
      const requestsBefore = backend.fake?.requests.length ?? 0;
      const sentBefore = sent.length;
      const second = await generateText({ model: model(), messages, tools, stopWhen: stepCountIs(3) });
      if (provider === 'openai-responses') {
        // The SDK refers to the stored items of the first turn instead of re-sending them.
        expect(JSON.stringify(sent.slice(sentBefore))).toContain('"type":"item_reference"');
      }
      expect(second.text).toContain('Thanks, that was the second turn');
      expect(calls).toEqual(['history']);
      if (backend.fake) {
        // The upstream got the whole history, the tool result (and on Responses the referenced items) included.
        const upstream = JSON.stringify(backend.fake.requests.slice(requestsBefore).map((request) => request.body));
        expect(upstream).toContain('secret-for-history');
        expect(upstream).toContain('Thanks, that was the second turn');
      }
    });

    if (provider !== 'openai-responses') {
      return; // only the Responses API has stored responses to continue from
    }

    it('continues with providerOptions.openai.previousResponseId', async () => {
      const first = await generateText({ model: model(), prompt: 'Remember the word marmalade' });
      const responseId = first.providerMetadata?.openai?.responseId;
      expect(typeof responseId).toBe('string');
      const requestsBefore = backend.fake?.requests.length ?? 0;
      const second = await generateText({
        model: model(),
        prompt: 'What was the word?',
        providerOptions: { openai: { previousResponseId: responseId as string } },
      });
      expect(second.text).toContain('What was the word?');
      if (backend.fake) {
        const upstream = JSON.stringify(backend.fake.requests.slice(requestsBefore).map((request) => request.body));
        expect(upstream).toContain('Remember the word marmalade');
      }
    });
  });
});
