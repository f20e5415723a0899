import { describe, expect, it } from 'vitest';
import type { ChatResult, FinishReason } from '../../core/chat.js';
import { encodeChatCompletion } from './encode-response.js';

const META = { id: 'chatcmpl-abc', model: 'my-model', created: 1767225600 };

describe('encodeChatCompletion', () => {
  it('encodes a text answer with cache and reasoning token details', () => {
    const result: ChatResult = {
      content: [
        { type: 'text', text: 'Hello' },
        { type: 'text', text: ' world' },
      ],
      finishReason: 'stop',
      usage: { inputTokens: 1342, outputTokens: 30, cacheReadTokens: 1280, reasoningTokens: 12 },
    };
    expect(encodeChatCompletion(result, META)).toEqual({
      id: 'chatcmpl-abc',
      object: 'chat.completion',
      created: 1767225600,
      model: 'my-model',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Hello world', refusal: null },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
      usage: {
        prompt_tokens: 1342,
        completion_tokens: 30,
        total_tokens: 1372,
        prompt_tokens_details: { cached_tokens: 1280 },
        completion_tokens_details: { reasoning_tokens: 12 },
      },
      system_fingerprint: null,
    });
  });

  it('sets content null when the answer is only tool calls, and keeps the call ids', () => {
    const result: ChatResult = {
      content: [
        { type: 'reasoning', text: 'Need both.' },
        { type: 'tool-call', id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'tool-call', id: 'toolu_b', name: 'get_time', arguments: '{}' },
      ],
      finishReason: 'tool-calls',
      usage: { inputTokens: 10, outputTokens: 5 },
    };
    const completion = encodeChatCompletion(result, META);
    expect(completion.choices[0]).toEqual({
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        refusal: null,
        reasoning_content: 'Need both.',
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'toolu_b', type: 'function', function: { name: 'get_time', arguments: '{}' } },
        ],
      },
      finish_reason: 'tool_calls',
      logprobs: null,
    });
    expect(completion.usage).toEqual({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 });
  });

  it('keeps text beside tool calls and answers an empty string for an empty answer', () => {
    const withText = encodeChatCompletion(
      {
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool-call', id: 'c', name: 'f', arguments: '{}' },
        ],
        finishReason: 'tool-calls',
        usage: { inputTokens: 1, outputTokens: 1 },
      },
      META,
    );
    expect(withText.choices[0].message.content).toBe('Checking.');
    const empty = encodeChatCompletion(
      { content: [], finishReason: 'length', usage: { inputTokens: 1, outputTokens: 0 } },
      META,
    );
    expect(empty.choices[0].message.content).toBe('');
    expect(empty.choices[0].message.tool_calls).toBeUndefined();
  });

  const finishReasons: Array<[FinishReason, string]> = [
    ['stop', 'stop'],
    ['length', 'length'],
    ['tool-calls', 'tool_calls'],
    ['content-filter', 'content_filter'],
    ['error', 'stop'],
    ['other', 'stop'],
  ];
  it.each(finishReasons)('maps finish reason %s to %s', (given, want) => {
    expect(
      encodeChatCompletion({ content: [], finishReason: given, usage: { inputTokens: 0, outputTokens: 0 } }, META)
        .choices[0].finish_reason,
    ).toBe(want);
  });
});
