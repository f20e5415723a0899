import { describe, expect, it } from 'vitest';
import type { ChatResult } from '../../core/chat.js';
import { encodeMessage } from './encode-response.js';
import type { AnthropicMessage } from './wire-types.js';

const META = { id: 'msg_test_1', model: 'claude-sonnet-4-5' };

describe('encodeMessage', () => {
  const cases: Array<[string, { given: ChatResult; want: Partial<AnthropicMessage> }]> = [
    [
      'text answer ends the turn; unknown cache counters are null',
      {
        given: {
          content: [{ type: 'text', text: 'Hello!' }],
          finishReason: 'stop',
          usage: { inputTokens: 12, outputTokens: 3 },
        },
        want: {
          content: [{ type: 'text', text: 'Hello!' }],
          stop_reason: 'end_turn',
          stop_sequence: null,
          usage: {
            input_tokens: 12,
            output_tokens: 3,
            cache_creation_input_tokens: null,
            cache_read_input_tokens: null,
          },
        },
      },
    ],
    [
      'thinking, redacted thinking, text and tool_use keep their order; tool_use input is parsed',
      {
        given: {
          content: [
            { type: 'reasoning', text: 'Check the weather.', signature: 'EqQBsig' },
            { type: 'reasoning', text: '', redactedData: 'EmwKredacted' },
            { type: 'text', text: 'Let me look.' },
            { type: 'tool-call', id: 'toolu_1', name: 'get_weather', arguments: '{"location":"Paris","days":3}' },
          ],
          finishReason: 'tool-calls',
          usage: { inputTokens: 3860, outputTokens: 140, cacheReadTokens: 1800, cacheWriteTokens: 2048 },
        },
        want: {
          content: [
            { type: 'thinking', thinking: 'Check the weather.', signature: 'EqQBsig' },
            { type: 'redacted_thinking', data: 'EmwKredacted' },
            { type: 'text', text: 'Let me look.' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'Paris', days: 3 } },
          ],
          stop_reason: 'tool_use',
          stop_sequence: null,
          usage: {
            input_tokens: 12,
            output_tokens: 140,
            cache_creation_input_tokens: 2048,
            cache_read_input_tokens: 1800,
          },
        },
      },
    ],
    [
      'a stop sequence is named',
      {
        given: {
          content: [{ type: 'text', text: 'one two' }],
          finishReason: 'stop',
          stopSequence: 'three',
          usage: { inputTokens: 5, outputTokens: 2, cacheReadTokens: 0 },
        },
        want: {
          content: [{ type: 'text', text: 'one two' }],
          stop_reason: 'stop_sequence',
          stop_sequence: 'three',
          usage: { input_tokens: 5, output_tokens: 2, cache_creation_input_tokens: null, cache_read_input_tokens: 0 },
        },
      },
    ],
    [
      'length → max_tokens; reasoning without signature has an empty one',
      {
        given: {
          content: [
            { type: 'reasoning', text: 'hmm' },
            { type: 'text', text: 'cut' },
          ],
          finishReason: 'length',
          usage: { inputTokens: 1, outputTokens: 4 },
        },
        want: {
          content: [
            { type: 'thinking', thinking: 'hmm', signature: '' },
            { type: 'text', text: 'cut' },
          ],
          stop_reason: 'max_tokens',
          stop_sequence: null,
          usage: {
            input_tokens: 1,
            output_tokens: 4,
            cache_creation_input_tokens: null,
            cache_read_input_tokens: null,
          },
        },
      },
    ],
    [
      'content-filter → refusal',
      {
        given: { content: [], finishReason: 'content-filter', usage: { inputTokens: 1, outputTokens: 0 } },
        want: {
          content: [],
          stop_reason: 'refusal',
          stop_sequence: null,
          usage: {
            input_tokens: 1,
            output_tokens: 0,
            cache_creation_input_tokens: null,
            cache_read_input_tokens: null,
          },
        },
      },
    ],
    [
      'tool arguments that are not a JSON object are kept under _raw; empty ones are {}',
      {
        given: {
          content: [
            { type: 'tool-call', id: 'call_1', name: 'a', arguments: '{"x": 1' },
            { type: 'tool-call', id: 'call_2', name: 'b', arguments: '' },
            { type: 'tool-call', id: 'call_3', name: 'c', arguments: '[1,2]' },
          ],
          finishReason: 'tool-calls',
          usage: { inputTokens: 1, outputTokens: 1 },
        },
        want: {
          content: [
            { type: 'tool_use', id: 'call_1', name: 'a', input: { _raw: '{"x": 1' } },
            { type: 'tool_use', id: 'call_2', name: 'b', input: {} },
            { type: 'tool_use', id: 'call_3', name: 'c', input: { _raw: '[1,2]' } },
          ],
          stop_reason: 'tool_use',
          stop_sequence: null,
          usage: {
            input_tokens: 1,
            output_tokens: 1,
            cache_creation_input_tokens: null,
            cache_read_input_tokens: null,
          },
        },
      },
    ],
  ];

  it.each(cases)('%s', (_name, { given, want }) => {
    expect(encodeMessage(given, META)).toEqual({
      id: 'msg_test_1',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      ...want,
    });
  });
});
