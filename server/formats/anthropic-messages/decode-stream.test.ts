import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../core/api-error.js';
import type { ChatStreamPart } from '../../core/chat.js';
import { decodeMessagesStream } from './decode-stream.js';
import type { AnthropicUpstreamStreamEvent } from './wire-types.js';

async function* events(list: Array<Record<string, unknown>>): AsyncGenerator<AnthropicUpstreamStreamEvent> {
  for (const data of list) {
    yield { event: String(data.type), data };
  }
}

async function collect(list: Array<Record<string, unknown>>): Promise<ChatStreamPart[]> {
  const parts: ChatStreamPart[] = [];
  for await (const part of decodeMessagesStream(events(list), { provider: 'claude' })) {
    parts.push(part);
  }
  return parts;
}

const messageStart = (usage: Record<string, unknown>) => ({
  type: 'message_start',
  message: {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    content: [],
    model: 'claude-sonnet-4-5',
    stop_reason: null,
    stop_sequence: null,
    usage,
  },
});

describe('decodeMessagesStream', () => {
  it('text, thinking with signature, redacted thinking and a tool call; usage merged from start and delta', async () => {
    const parts = await collect([
      messageStart({
        input_tokens: 12,
        cache_creation_input_tokens: 2048,
        cache_read_input_tokens: 1800,
        output_tokens: 1,
      }),
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
      { type: 'ping' },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Think' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'ing.' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'EqQBsig' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'redacted_thinking', data: 'EmwK' } },
      { type: 'content_block_stop', index: 1 },
      { type: 'content_block_start', index: 2, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 2, delta: { type: 'text_delta', text: 'Calling.' } },
      { type: 'content_block_stop', index: 2 },
      {
        type: 'content_block_start',
        index: 3,
        content_block: { type: 'tool_use', id: 'toolu_1', name: 'f', input: {} },
      },
      { type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json: '' } },
      { type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json: '{"a"' } },
      { type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json: ': 1}' } },
      { type: 'content_block_stop', index: 3 },
      {
        type: 'content_block_start',
        index: 4,
        content_block: { type: 'tool_use', id: 'toolu_2', name: 'g', input: {} },
      },
      { type: 'content_block_stop', index: 4 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'tool_use', stop_sequence: null },
        usage: { output_tokens: 140, output_tokens_details: { thinking_tokens: 50 } },
      },
      { type: 'message_stop' },
    ]);
    expect(parts).toEqual([
      { type: 'reasoning-delta', text: 'Think' },
      { type: 'reasoning-delta', text: 'ing.' },
      { type: 'reasoning-end', signature: 'EqQBsig' },
      { type: 'reasoning-end', redactedData: 'EmwK' },
      { type: 'text-delta', text: 'Calling.' },
      { type: 'tool-call-start', index: 0, id: 'toolu_1', name: 'f' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{"a"' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: ': 1}' },
      { type: 'tool-call-end', index: 0 },
      { type: 'tool-call-start', index: 1, id: 'toolu_2', name: 'g' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: '{}' },
      { type: 'tool-call-end', index: 1 },
      {
        type: 'finish',
        finishReason: 'tool-calls',
        usage: {
          inputTokens: 3860,
          outputTokens: 140,
          cacheReadTokens: 1800,
          cacheWriteTokens: 2048,
          reasoningTokens: 50,
        },
      },
    ]);
  });

  it('later non-null usage counters in message_delta replace those of message_start', async () => {
    const parts = await collect([
      messageStart({ input_tokens: 10, cache_read_input_tokens: 0, output_tokens: 1 }),
      {
        type: 'message_delta',
        delta: { stop_reason: 'stop_sequence', stop_sequence: 'END' },
        usage: { input_tokens: 11, cache_read_input_tokens: null, cache_creation_input_tokens: 5, output_tokens: 7 },
      },
      { type: 'message_stop' },
    ]);
    expect(parts).toEqual([
      {
        type: 'finish',
        finishReason: 'stop',
        stopSequence: 'END',
        usage: { inputTokens: 16, outputTokens: 7, cacheReadTokens: 0, cacheWriteTokens: 5 },
      },
    ]);
  });

  it.each([
    ['overloaded_error', 503],
    ['api_error', 502],
  ])('an %s event throws UpstreamError %i after the parts before it', async (type, status) => {
    const parts: ChatStreamPart[] = [];
    const run = async () => {
      for await (const part of decodeMessagesStream(
        events([
          messageStart({ input_tokens: 1, output_tokens: 1 }),
          { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
          { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Partial' } },
          { type: 'error', error: { type, message: 'Overloaded' } },
        ]),
        { provider: 'claude' },
      )) {
        parts.push(part);
      }
    };
    const error = await run().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({
      status,
      provider: 'claude',
      message: `Upstream claude failed mid-stream (${type}): Overloaded`,
    });
    expect(parts).toEqual([{ type: 'text-delta', text: 'Partial' }]);
  });

  it('a stream cut before the stop reason throws 502', async () => {
    await expect(
      collect([
        messageStart({ input_tokens: 1, output_tokens: 1 }),
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: 'x' } },
      ]),
    ).rejects.toMatchObject({
      status: 502,
    });
  });

  it('a stream without message_stop but with a stop reason still finishes', async () => {
    const parts = await collect([
      messageStart({ input_tokens: 2, output_tokens: 1 }),
      { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 3 } },
    ]);
    expect(parts).toEqual([{ type: 'finish', finishReason: 'stop', usage: { inputTokens: 2, outputTokens: 3 } }]);
  });
});
