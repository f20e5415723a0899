import { describe, expect, it } from 'vitest';
import { ApiError } from '../../core/api-error.js';
import type { ChatStreamPart } from '../../core/chat.js';
import { encodeChatStream } from './encode-stream.js';

const META = { id: 'chatcmpl-1', model: 'm', created: 1767225600 };

async function* from(parts: ChatStreamPart[]): AsyncGenerator<ChatStreamPart> {
  for (const part of parts) {
    yield part;
  }
}

async function collect(iterable: AsyncIterable<{ data: unknown }>): Promise<unknown[]> {
  const events: unknown[] = [];
  for await (const event of iterable) {
    events.push(event.data);
  }
  return events;
}

function chunk(delta: object, finishReason: string | null = null, extra: object = {}) {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1767225600,
    model: 'm',
    system_fingerprint: null,
    choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
    ...extra,
  };
}

describe('encodeChatStream', () => {
  it('streams text with a role chunk first and finish_reason last, without usage chunks', async () => {
    const encoding = encodeChatStream(
      from([
        { type: 'text-delta', text: 'Hel' },
        { type: 'text-delta', text: '' },
        { type: 'text-delta', text: 'lo' },
        { type: 'finish', finishReason: 'stop', usage: { inputTokens: 5, outputTokens: 2 } },
      ]),
      { ...META, includeUsage: false },
    );
    expect(encoding.summary()).toBeNull();
    expect(await collect(encoding.events)).toEqual([
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: 'Hel' }),
      chunk({ content: 'lo' }),
      chunk({}, 'stop'),
    ]);
    expect(encoding.summary()).toEqual({ finishReason: 'stop', usage: { inputTokens: 5, outputTokens: 2 } });
  });

  it('puts usage: null on every chunk and the totals in a last chunk with no choices when asked', async () => {
    const usage = { inputTokens: 1342, outputTokens: 8, cacheReadTokens: 1280, reasoningTokens: 3 };
    const events = await collect(
      encodeChatStream(
        from([
          { type: 'reasoning-delta', text: 'think' },
          { type: 'reasoning-end' },
          { type: 'text-delta', text: 'Paris' },
          { type: 'finish', finishReason: 'length', usage },
        ]),
        { ...META, includeUsage: true },
      ).events,
    );
    expect(events).toEqual([
      chunk({ role: 'assistant', content: '' }, null, { usage: null }),
      chunk({ reasoning_content: 'think' }, null, { usage: null }),
      chunk({ content: 'Paris' }, null, { usage: null }),
      chunk({}, 'length', { usage: null }),
      {
        ...chunk({}, null),
        choices: [],
        usage: {
          prompt_tokens: 1342,
          completion_tokens: 8,
          total_tokens: 1350,
          prompt_tokens_details: { cached_tokens: 1280 },
          completion_tokens_details: { reasoning_tokens: 3 },
        },
      },
    ]);
  });

  it('announces each tool call with id and name, then argument fragments, renumbering sparse indexes', async () => {
    const events = await collect(
      encodeChatStream(
        from([
          { type: 'tool-call-start', index: 3, id: 'toolu_a', name: 'get_weather' },
          { type: 'tool-call-delta', index: 3, argumentsDelta: '{"city":' },
          { type: 'tool-call-start', index: 7, id: 'toolu_b', name: 'get_time' },
          { type: 'tool-call-delta', index: 7, argumentsDelta: '{}' },
          { type: 'tool-call-delta', index: 3, argumentsDelta: '"Paris"}' },
          { type: 'tool-call-end', index: 3 },
          { type: 'tool-call-end', index: 7 },
          { type: 'finish', finishReason: 'tool-calls', usage: { inputTokens: 1, outputTokens: 1 } },
        ]),
        { ...META, includeUsage: false },
      ).events,
    );
    expect(events).toEqual([
      chunk({ role: 'assistant', content: '' }),
      chunk({
        tool_calls: [{ index: 0, id: 'toolu_a', type: 'function', function: { name: 'get_weather', arguments: '' } }],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
      chunk({
        tool_calls: [{ index: 1, id: 'toolu_b', type: 'function', function: { name: 'get_time', arguments: '' } }],
      }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: '{}' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
      chunk({}, 'tool_calls'),
    ]);
  });

  it('fails the first next() without producing an event when the producer fails before its first part', async () => {
    async function* failing(): AsyncGenerator<ChatStreamPart> {
      throw new ApiError(429, 'rate limited');
    }
    const iterator = encodeChatStream(failing(), { ...META, includeUsage: true }).events[Symbol.asyncIterator]();
    await expect(iterator.next()).rejects.toMatchObject({ status: 429 });
  });

  it('throws after the start when the producer fails mid-stream, and leaves the summary empty', async () => {
    async function* failing(): AsyncGenerator<ChatStreamPart> {
      yield { type: 'text-delta', text: 'partial' };
      throw new Error('upstream cut');
    }
    const encoding = encodeChatStream(failing(), { ...META, includeUsage: false });
    const seen: unknown[] = [];
    await expect(
      (async () => {
        for await (const event of encoding.events) {
          seen.push(event.data);
        }
      })(),
    ).rejects.toThrow('upstream cut');
    expect(seen).toEqual([chunk({ role: 'assistant', content: '' }), chunk({ content: 'partial' })]);
    expect(encoding.summary()).toBeNull();
  });

  it('throws a 502 when the parts end without a finish', async () => {
    await expect(
      collect(encodeChatStream(from([{ type: 'text-delta', text: 'x' }]), { ...META, includeUsage: false }).events),
    ).rejects.toMatchObject({
      status: 502,
    });
  });

  it('stops the producer when the consumer stops early', async () => {
    let closed = false;
    async function* endless(): AsyncGenerator<ChatStreamPart> {
      try {
        for (;;) {
          yield { type: 'text-delta', text: 'x' };
        }
      } finally {
        closed = true;
      }
    }
    for await (const event of encodeChatStream(endless(), { ...META, includeUsage: false }).events) {
      if (event.data.choices[0]?.delta.content === 'x') {
        break;
      }
    }
    expect(closed).toBe(true);
  });
});
