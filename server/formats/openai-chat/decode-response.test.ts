import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../core/api-error.js';
import type { ChatResult } from '../../core/chat.js';
import { countTextTokens } from '../../tokens/tokenizer.js';
import { decodeChatCompletion } from './decode-response.js';
import type { UpstreamChatCompletion } from './wire-types.js';

const CONTEXT = { provider: 'up', estimateInputTokens: async () => 42, generateToolCallId: () => 'call_generated' };

function completion(message: object, finishReason: string | null, usage?: object): UpstreamChatCompletion {
  return {
    id: 'x',
    object: 'chat.completion',
    model: 'm',
    choices: [{ index: 0, message, finish_reason: finishReason }],
    ...(usage ? { usage } : {}),
  };
}

describe('decodeChatCompletion', () => {
  const cases: Array<[string, { given: UpstreamChatCompletion; want: ChatResult }]> = [
    [
      'text with cached and reasoning tokens',
      {
        given: completion({ role: 'assistant', content: 'Paris.' }, 'stop', {
          prompt_tokens: 1342,
          completion_tokens: 8,
          total_tokens: 1350,
          prompt_tokens_details: { cached_tokens: 1280 },
          completion_tokens_details: { reasoning_tokens: 0 },
        }),
        want: {
          content: [{ type: 'text', text: 'Paris.' }],
          finishReason: 'stop',
          usage: { inputTokens: 1342, outputTokens: 8, cacheReadTokens: 1280, reasoningTokens: 0 },
        },
      },
    ],
    [
      'tool calls with content null',
      {
        given: completion(
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
              { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
            ],
          },
          'tool_calls',
          { prompt_tokens: 50, completion_tokens: 20, total_tokens: 70 },
        ),
        want: {
          content: [
            { type: 'tool-call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
            { type: 'tool-call', id: 'call_2', name: 'get_time', arguments: '{}' },
          ],
          finishReason: 'tool-calls',
          usage: { inputTokens: 50, outputTokens: 20 },
        },
      },
    ],
    [
      'Ollama-style tool calls: object arguments, no id, finish_reason stop',
      {
        given: completion(
          {
            role: 'assistant',
            content: '',
            tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Paris' } } }],
          },
          'stop',
          {
            prompt_tokens: 5,
            completion_tokens: 6,
            total_tokens: 11,
          },
        ),
        want: {
          content: [{ type: 'tool-call', id: 'call_generated', name: 'get_weather', arguments: '{"city":"Paris"}' }],
          finishReason: 'tool-calls',
          usage: { inputTokens: 5, outputTokens: 6 },
        },
      },
    ],
    [
      'reasoning_content before the text, DeepSeek cache hits',
      {
        given: completion({ role: 'assistant', content: '51', reasoning_content: '17*3' }, 'stop', {
          prompt_tokens: 19,
          completion_tokens: 22,
          total_tokens: 41,
          prompt_cache_hit_tokens: 16,
          prompt_cache_miss_tokens: 3,
        }),
        want: {
          content: [
            { type: 'reasoning', text: '17*3' },
            { type: 'text', text: '51' },
          ],
          finishReason: 'stop',
          usage: { inputTokens: 19, outputTokens: 22, cacheReadTokens: 16 },
        },
      },
    ],
    [
      '`reasoning` (Ollama, OpenRouter), length, vLLM stop_reason ignored unless stopped',
      {
        given: {
          choices: [
            { index: 0, message: { content: 'ab', reasoning: 'r' }, finish_reason: 'length', stop_reason: null },
          ],
          usage: { prompt_tokens: 1, completion_tokens: 2 },
        },
        want: {
          content: [
            { type: 'reasoning', text: 'r' },
            { type: 'text', text: 'ab' },
          ],
          finishReason: 'length',
          usage: { inputTokens: 1, outputTokens: 2 },
        },
      },
    ],
    [
      'a vLLM stop string',
      {
        given: {
          choices: [{ index: 0, message: { content: 'a' }, finish_reason: 'stop', stop_reason: 'END' }],
          usage: { prompt_tokens: 1, completion_tokens: 1 },
        },
        want: {
          content: [{ type: 'text', text: 'a' }],
          finishReason: 'stop',
          stopSequence: 'END',
          usage: { inputTokens: 1, outputTokens: 1 },
        },
      },
    ],
    [
      'content_filter and text parts',
      {
        given: {
          choices: [
            {
              message: {
                content: [
                  { type: 'text', text: 'x' },
                  { type: 'text', text: 'y' },
                ],
              },
              finish_reason: 'content_filter',
            },
          ],
          usage: { prompt_tokens: 1, completion_tokens: 1 },
        },
        want: {
          content: [{ type: 'text', text: 'xy' }],
          finishReason: 'content-filter',
          usage: { inputTokens: 1, outputTokens: 1 },
        },
      },
    ],
  ];
  it.each(cases)('decodes %s', async (_name, { given, want }) => {
    expect(await decodeChatCompletion(given, CONTEXT)).toEqual(want);
  });

  it('estimates usage with the tokenizer when the upstream reports none', async () => {
    const text = 'The capital of France is Paris.';
    expect((await decodeChatCompletion(completion({ content: text }, 'stop'), CONTEXT)).usage).toEqual({
      inputTokens: 42,
      outputTokens: await countTextTokens(text),
    });
    expect((await decodeChatCompletion(completion({ content: text }, 'stop', {}), CONTEXT)).usage).toEqual({
      inputTokens: 42,
      outputTokens: await countTextTokens(text),
    });
  });

  it('throws an UpstreamError for an error body or an answer without choices', async () => {
    await expect(decodeChatCompletion({ error: { message: 'model overloaded', code: 503 } }, CONTEXT)).rejects.toThrow(
      UpstreamError,
    );
    await expect(decodeChatCompletion({ error: { message: 'slow down', code: 429 } }, CONTEXT)).rejects.toMatchObject({
      status: 429,
    });
    await expect(decodeChatCompletion({ choices: [] }, CONTEXT)).rejects.toThrow(/without a message/);
  });
});
