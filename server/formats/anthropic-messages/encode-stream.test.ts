import { describe, expect, it } from 'vitest';
import { ApiError, UpstreamError } from '../../core/api-error.js';
import type { ChatStreamPart } from '../../core/chat.js';
import { encodeMessagesStream } from './encode-stream.js';
import type { AnthropicStreamEvent } from './wire-types.js';

const META = { id: 'msg_s1', model: 'claude-sonnet-4-5', inputTokens: 21 };

async function* from(parts: ChatStreamPart[], delayMs = 0): AsyncGenerator<ChatStreamPart> {
  for (const part of parts) {
    if (delayMs > 0) {
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
    yield part;
  }
}

async function collect(events: AsyncIterable<AnthropicStreamEvent>): Promise<AnthropicStreamEvent[]> {
  const out: AnthropicStreamEvent[] = [];
  for await (const event of events) {
    out.push(event);
  }
  return out;
}

const start = (index: number, content_block: Record<string, unknown>) => ({
  event: 'content_block_start',
  data: { type: 'content_block_start', index, content_block },
});
const delta = (index: number, value: Record<string, unknown>) => ({
  event: 'content_block_delta',
  data: { type: 'content_block_delta', index, delta: value },
});
const stop = (index: number) => ({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
const messageStart = (inputTokens: number) => ({
  event: 'message_start',
  data: {
    type: 'message_start',
    message: {
      id: 'msg_s1',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: inputTokens,
        output_tokens: 0,
        cache_creation_input_tokens: null,
        cache_read_input_tokens: null,
      },
    },
  },
});
const messageEnd = (stopReason: string, stopSequence: string | null, usage: Record<string, unknown>) => [
  {
    event: 'message_delta',
    data: { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: stopSequence }, usage },
  },
  { event: 'message_stop', data: { type: 'message_stop' } },
];

const ARGUMENT_FRAGMENTS = [
  '{"location":',
  ' "San',
  ' Francisc',
  'o,',
  ' CA"',
  ', "unit": ',
  '"celsi',
  'us", "da',
  'ys": ',
  '3',
  '}',
];

describe('encodeMessagesStream', () => {
  const cases: Array<[string, { given: ChatStreamPart[]; want: unknown[] }]> = [
    [
      'text only',
      {
        given: [
          { type: 'text-delta', text: 'Bon' },
          { type: 'text-delta', text: '' },
          { type: 'text-delta', text: 'jour' },
          { type: 'finish', finishReason: 'stop', usage: { inputTokens: 21, outputTokens: 2 } },
        ],
        want: [
          messageStart(21),
          start(0, { type: 'text', text: '', citations: null }),
          delta(0, { type: 'text_delta', text: 'Bon' }),
          delta(0, { type: 'text_delta', text: 'jour' }),
          stop(0),
          ...messageEnd('end_turn', null, {
            output_tokens: 2,
            input_tokens: 21,
            cache_creation_input_tokens: null,
            cache_read_input_tokens: null,
          }),
        ],
      },
    ],
    [
      'thinking with signature, text, then a tool call whose fragments pass through exactly',
      {
        given: [
          { type: 'reasoning-delta', text: 'Weather needed.' },
          { type: 'reasoning-delta', text: ' Use the tool.' },
          { type: 'reasoning-end', signature: 'EqQBCgIYAhIM' },
          { type: 'text-delta', text: 'Checking.' },
          { type: 'tool-call-start', index: 0, id: 'toolu_01', name: 'get_weather' },
          ...ARGUMENT_FRAGMENTS.map(
            (fragment): ChatStreamPart => ({ type: 'tool-call-delta', index: 0, argumentsDelta: fragment }),
          ),
          { type: 'tool-call-end', index: 0 },
          {
            type: 'finish',
            finishReason: 'tool-calls',
            usage: { inputTokens: 3860, outputTokens: 89, cacheReadTokens: 1800, cacheWriteTokens: 2048 },
          },
        ],
        want: [
          messageStart(21),
          start(0, { type: 'thinking', thinking: '', signature: '' }),
          delta(0, { type: 'thinking_delta', thinking: 'Weather needed.' }),
          delta(0, { type: 'thinking_delta', thinking: ' Use the tool.' }),
          delta(0, { type: 'signature_delta', signature: 'EqQBCgIYAhIM' }),
          stop(0),
          start(1, { type: 'text', text: '', citations: null }),
          delta(1, { type: 'text_delta', text: 'Checking.' }),
          stop(1),
          start(2, { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: {} }),
          ...ARGUMENT_FRAGMENTS.map((fragment) => delta(2, { type: 'input_json_delta', partial_json: fragment })),
          stop(2),
          ...messageEnd('tool_use', null, {
            output_tokens: 89,
            input_tokens: 12,
            cache_creation_input_tokens: 2048,
            cache_read_input_tokens: 1800,
          }),
        ],
      },
    ],
    [
      'interleaved tool calls are serialised: each call keeps its own block and fragments',
      {
        given: [
          { type: 'tool-call-start', index: 0, id: 'call_a', name: 'a' },
          { type: 'tool-call-delta', index: 0, argumentsDelta: '{"x"' },
          { type: 'tool-call-start', index: 1, id: 'call_b', name: 'b' },
          { type: 'tool-call-delta', index: 1, argumentsDelta: '{"y"' },
          { type: 'tool-call-delta', index: 0, argumentsDelta: ':1}' },
          { type: 'tool-call-delta', index: 1, argumentsDelta: ':2}' },
          { type: 'tool-call-end', index: 0 },
          { type: 'tool-call-end', index: 1 },
          { type: 'finish', finishReason: 'tool-calls', usage: { inputTokens: 5, outputTokens: 9 } },
        ],
        want: [
          messageStart(21),
          start(0, { type: 'tool_use', id: 'call_a', name: 'a', input: {} }),
          delta(0, { type: 'input_json_delta', partial_json: '{"x"' }),
          delta(0, { type: 'input_json_delta', partial_json: ':1}' }),
          stop(0),
          start(1, { type: 'tool_use', id: 'call_b', name: 'b', input: {} }),
          delta(1, { type: 'input_json_delta', partial_json: '{"y"' }),
          delta(1, { type: 'input_json_delta', partial_json: ':2}' }),
          stop(1),
          ...messageEnd('tool_use', null, {
            output_tokens: 9,
            input_tokens: 5,
            cache_creation_input_tokens: null,
            cache_read_input_tokens: null,
          }),
        ],
      },
    ],
    [
      'tool calls that never end are closed at finish, with what waited behind them',
      {
        given: [
          { type: 'tool-call-start', index: 0, id: 'call_a', name: 'a' },
          { type: 'tool-call-delta', index: 0, argumentsDelta: '{}' },
          { type: 'text-delta', text: 'late text' },
          { type: 'finish', finishReason: 'tool-calls', usage: { inputTokens: 5, outputTokens: 9 } },
        ],
        want: [
          messageStart(21),
          start(0, { type: 'tool_use', id: 'call_a', name: 'a', input: {} }),
          delta(0, { type: 'input_json_delta', partial_json: '{}' }),
          stop(0),
          start(1, { type: 'text', text: '', citations: null }),
          delta(1, { type: 'text_delta', text: 'late text' }),
          stop(1),
          ...messageEnd('tool_use', null, {
            output_tokens: 9,
            input_tokens: 5,
            cache_creation_input_tokens: null,
            cache_read_input_tokens: null,
          }),
        ],
      },
    ],
    [
      'redacted thinking is its own block; a stop sequence is named',
      {
        given: [
          { type: 'reasoning-end', redactedData: 'EmwKAhgB' },
          { type: 'text-delta', text: 'one two' },
          { type: 'finish', finishReason: 'stop', stopSequence: 'three', usage: { inputTokens: 5, outputTokens: 2 } },
        ],
        want: [
          messageStart(21),
          start(0, { type: 'redacted_thinking', data: 'EmwKAhgB' }),
          stop(0),
          start(1, { type: 'text', text: '', citations: null }),
          delta(1, { type: 'text_delta', text: 'one two' }),
          stop(1),
          ...messageEnd('stop_sequence', 'three', {
            output_tokens: 2,
            input_tokens: 5,
            cache_creation_input_tokens: null,
            cache_read_input_tokens: null,
          }),
        ],
      },
    ],
    [
      'reasoning without a signature closes when text starts; max tokens',
      {
        given: [
          { type: 'reasoning-delta', text: 'hmm' },
          { type: 'text-delta', text: 'cut' },
          { type: 'finish', finishReason: 'length', usage: { inputTokens: 1, outputTokens: 2 } },
        ],
        want: [
          messageStart(21),
          start(0, { type: 'thinking', thinking: '', signature: '' }),
          delta(0, { type: 'thinking_delta', thinking: 'hmm' }),
          stop(0),
          start(1, { type: 'text', text: '', citations: null }),
          delta(1, { type: 'text_delta', text: 'cut' }),
          stop(1),
          ...messageEnd('max_tokens', null, {
            output_tokens: 2,
            input_tokens: 1,
            cache_creation_input_tokens: null,
            cache_read_input_tokens: null,
          }),
        ],
      },
    ],
  ];

  it.each(cases)('%s', async (_name, { given, want }) => {
    expect(await collect(encodeMessagesStream(from(given), META))).toEqual(want);
  });

  it('message_start reports 0 input tokens when none are known', async () => {
    const events = await collect(
      encodeMessagesStream(
        from([{ type: 'finish', finishReason: 'stop', usage: { inputTokens: 4, outputTokens: 0 } }]),
        { id: 'msg_x', model: 'm' },
      ),
    );
    expect((events[0].data as { message: { usage: unknown } }).message.usage).toEqual({
      input_tokens: 0,
      output_tokens: 0,
      cache_creation_input_tokens: null,
      cache_read_input_tokens: null,
    });
    expect(events.map((event) => event.event)).toEqual(['message_start', 'message_delta', 'message_stop']);
  });

  it('summary() gives the final usage once finished', async () => {
    const encoding = encodeMessagesStream(
      from([
        { type: 'text-delta', text: 'x' },
        { type: 'finish', finishReason: 'stop', usage: { inputTokens: 30, outputTokens: 7, cacheReadTokens: 20 } },
      ]),
      META,
    );
    expect(encoding.summary()).toEqual({ finished: false });
    await collect(encoding);
    expect(encoding.summary()).toEqual({
      finished: true,
      finishReason: 'stop',
      stopSequence: undefined,
      usage: { inputTokens: 30, outputTokens: 7, cacheReadTokens: 20 },
    });
  });

  it('throws before any event when the first part fails', async () => {
    async function* failing(): AsyncGenerator<ChatStreamPart> {
      throw UpstreamError.fromStatus('anthropic', 429, 'slow down', '7');
    }
    const encoding = encodeMessagesStream(failing(), META);
    await expect(encoding.next()).rejects.toMatchObject({ status: 429, headers: { 'retry-after': '7' } });
  });

  it('passes a mid-stream failure through after the events produced so far', async () => {
    async function* failing(): AsyncGenerator<ChatStreamPart> {
      yield { type: 'text-delta', text: 'Partial' };
      throw new UpstreamError('anthropic', 503, null, 'overloaded');
    }
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const event of encodeMessagesStream(failing(), META)) {
          seen.push(event.event);
        }
      })(),
    ).rejects.toMatchObject({ status: 503 });
    expect(seen).toEqual(['message_start', 'content_block_start', 'content_block_delta']);
  });

  it('a stream that ends without finish is an error, not a complete message', async () => {
    const seen: string[] = [];
    const run = async () => {
      for await (const event of encodeMessagesStream(from([{ type: 'text-delta', text: 'x' }]), META)) {
        seen.push(event.event);
      }
    };
    await expect(run()).rejects.toBeInstanceOf(ApiError);
    await expect(run()).rejects.toMatchObject({ status: 502, code: 'incomplete_stream' });
    expect(seen).not.toContain('message_stop');
  });

  it('sends pings while the next part is slow, and only then', async () => {
    const events = await collect(
      encodeMessagesStream(
        from(
          [
            { type: 'text-delta', text: 'a' },
            { type: 'text-delta', text: 'b' },
            { type: 'finish', finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 2 } },
          ],
          120,
        ),
        META,
        { pingIntervalMs: 25 },
      ),
    );
    const pings = events.filter((event) => event.event === 'ping');
    expect(pings.length).toBeGreaterThanOrEqual(4);
    expect(pings[0]).toEqual({ event: 'ping', data: { type: 'ping' } });
    expect(events.filter((event) => event.event !== 'ping').map((event) => event.event)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    // The first part is awaited before message_start, so no ping can precede it.
    expect(events[0].event).toBe('message_start');
  });

  it('no pings when parts come faster than the interval', async () => {
    const events = await collect(
      encodeMessagesStream(
        from(
          [
            { type: 'text-delta', text: 'a' },
            { type: 'finish', finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 1 } },
          ],
          5,
        ),
        META,
        { pingIntervalMs: 1000 },
      ),
    );
    expect(events.some((event) => event.event === 'ping')).toBe(false);
  });

  it('closes the source when the consumer stops early', async () => {
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
    for await (const event of encodeMessagesStream(endless(), META)) {
      if (event.event === 'content_block_delta') {
        break;
      }
    }
    expect(closed).toBe(true);
  });
});
