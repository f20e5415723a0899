import { describe, expect, it } from 'vitest';
import type { ChatResult } from '../../core/chat.js';
import { decodeMessage } from './decode-response.js';
import type { AnthropicUpstreamMessage } from './wire-types.js';

describe('decodeMessage', () => {
  const cases: Array<[string, { given: AnthropicUpstreamMessage; want: ChatResult }]> = [
    [
      'text, with cache counters added into the whole input',
      {
        given: {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          model: 'claude-sonnet-4-5',
          content: [{ type: 'text', text: 'Hi there.' }],
          stop_reason: 'end_turn',
          stop_sequence: null,
          usage: {
            input_tokens: 12,
            cache_creation_input_tokens: 100,
            cache_read_input_tokens: 900,
            output_tokens: 5,
            service_tier: 'standard',
          },
        },
        want: {
          content: [{ type: 'text', text: 'Hi there.' }],
          finishReason: 'stop',
          usage: { inputTokens: 1012, outputTokens: 5, cacheReadTokens: 900, cacheWriteTokens: 100 },
        },
      },
    ],
    [
      'thinking, redacted thinking and tool_use; server tool blocks are skipped',
      {
        given: {
          content: [
            { type: 'thinking', thinking: 'Let me think.', signature: 'EqQBsig' },
            { type: 'redacted_thinking', data: 'EmwKdata' },
            { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'x' } },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'Paris', unit: 'celsius' } },
          ],
          stop_reason: 'tool_use',
          stop_sequence: null,
          usage: {
            input_tokens: 40,
            output_tokens: 60,
            cache_creation_input_tokens: null,
            cache_read_input_tokens: null,
            output_tokens_details: { thinking_tokens: 30 },
          },
        },
        want: {
          content: [
            { type: 'reasoning', text: 'Let me think.', signature: 'EqQBsig' },
            { type: 'reasoning', text: '', redactedData: 'EmwKdata' },
            {
              type: 'tool-call',
              id: 'toolu_1',
              name: 'get_weather',
              arguments: '{"location":"Paris","unit":"celsius"}',
            },
          ],
          finishReason: 'tool-calls',
          usage: { inputTokens: 40, outputTokens: 60, reasoningTokens: 30 },
        },
      },
    ],
    [
      'stop sequence',
      {
        given: {
          content: [{ type: 'text', text: '1, 2' }],
          stop_reason: 'stop_sequence',
          stop_sequence: ', 3',
          usage: { input_tokens: 3, output_tokens: 4 },
        },
        want: {
          content: [{ type: 'text', text: '1, 2' }],
          finishReason: 'stop',
          stopSequence: ', 3',
          usage: { inputTokens: 3, outputTokens: 4 },
        },
      },
    ],
    [
      'max_tokens, refusal, pause_turn and context window map to canonical reasons',
      {
        given: { content: [], stop_reason: 'max_tokens', usage: { input_tokens: 1, output_tokens: 1 } },
        want: { content: [], finishReason: 'length', usage: { inputTokens: 1, outputTokens: 1 } },
      },
    ],
  ];
  it.each(cases)('%s', (_name, { given, want }) => {
    expect(decodeMessage(given)).toEqual(want);
  });

  it.each([
    ['refusal', 'content-filter'],
    ['pause_turn', 'other'],
    ['model_context_window_exceeded', 'length'],
    [null, 'other'],
  ])('stop_reason %s → %s', (stopReason, finishReason) => {
    expect(
      decodeMessage({ content: [], stop_reason: stopReason, usage: { input_tokens: 0, output_tokens: 0 } })
        .finishReason,
    ).toBe(finishReason);
  });
});
