import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../core/api-error.js';
import type { ChatStreamPart } from '../../core/chat.js';
import { countTextTokens } from '../../tokens/tokenizer.js';
import { decodeChatStream } from './decode-stream.js';
import { encodeChatStream } from './encode-stream.js';
import type { UpstreamChatCompletion, UpstreamChoice } from './wire-types.js';

let generated = 0;
const CONTEXT = {
  provider: 'up',
  estimateInputTokens: async () => 42,
  generateToolCallId: () => `call_gen${generated++}`,
};

function delta(
  value: UpstreamChoice['delta'],
  finishReason: string | null = null,
  extra: Partial<UpstreamChatCompletion> = {},
): UpstreamChatCompletion {
  return {
    id: 'c',
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta: value, finish_reason: finishReason }],
    ...extra,
  };
}

function usageChunk(usage: object): UpstreamChatCompletion {
  return { id: 'c', object: 'chat.completion.chunk', choices: [], usage };
}

async function* from<T>(items: T[]): AsyncGenerator<T> {
  for (const item of items) {
    yield item;
  }
}

async function decode(chunks: UpstreamChatCompletion[]): Promise<ChatStreamPart[]> {
  generated = 0;
  const parts: ChatStreamPart[] = [];
  for await (const part of decodeChatStream(from(chunks), CONTEXT)) {
    parts.push(part);
  }
  return parts;
}

const USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

describe('decodeChatStream', () => {
  const cases: Array<[string, { given: UpstreamChatCompletion[]; want: ChatStreamPart[] }]> = [
    [
      'text, with usage after finish_reason in a choices: [] chunk, cached and reasoning tokens kept',
      {
        given: [
          delta({ role: 'assistant', content: '' }),
          delta({ content: 'Hel' }),
          delta({ content: 'lo' }),
          delta({}, 'stop'),
          usageChunk({
            ...USAGE,
            prompt_tokens_details: { cached_tokens: 8 },
            completion_tokens_details: { reasoning_tokens: 2 },
          }),
        ],
        want: [
          { type: 'text-delta', text: 'Hel' },
          { type: 'text-delta', text: 'lo' },
          {
            type: 'finish',
            finishReason: 'stop',
            usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 8, reasoningTokens: 2 },
          },
        ],
      },
    ],
    [
      'usage in the same chunk as finish_reason (vLLM), and a later usage: null not overwriting it',
      {
        given: [delta({ content: 'a' }), delta({}, 'length', { usage: USAGE }), { choices: [], usage: null }],
        want: [
          { type: 'text-delta', text: 'a' },
          { type: 'finish', finishReason: 'length', usage: { inputTokens: 10, outputTokens: 5 } },
        ],
      },
    ],
    [
      'a tool call whose arguments arrive in twelve fragments',
      {
        given: [
          delta({
            role: 'assistant',
            content: null,
            tool_calls: [
              { index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } },
            ],
          }),
          ...['{"', 'city', '":', ' "', 'Par', 'is', '",', ' "', 'unit', '": ', '"c"', '}'].map((fragment) =>
            delta({ tool_calls: [{ index: 0, function: { arguments: fragment } }] }),
          ),
          delta({}, 'tool_calls'),
          usageChunk(USAGE),
        ],
        want: [
          { type: 'tool-call-start', index: 0, id: 'call_1', name: 'get_weather' },
          ...['{"', 'city', '":', ' "', 'Par', 'is', '",', ' "', 'unit', '": ', '"c"', '}'].map((argumentsDelta) => ({
            type: 'tool-call-delta' as const,
            index: 0,
            argumentsDelta,
          })),
          { type: 'tool-call-end', index: 0 },
          { type: 'finish', finishReason: 'tool-calls', usage: { inputTokens: 10, outputTokens: 5 } },
        ],
      },
    ],
    [
      'two parallel tool calls interleaved by index, started in a single chunk',
      {
        given: [
          delta({
            tool_calls: [
              { index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"ci' } },
              { index: 1, id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '' } },
            ],
          }),
          delta({ tool_calls: [{ index: 1, function: { arguments: '{"tz":' } }] }),
          delta({ tool_calls: [{ index: 0, function: { arguments: 'ty":"Paris"}' } }] }),
          delta({ tool_calls: [{ index: 1, function: { arguments: '"UTC"}' } }] }),
          delta({}, 'tool_calls', { usage: USAGE }),
        ],
        want: [
          { type: 'tool-call-start', index: 0, id: 'call_a', name: 'get_weather' },
          { type: 'tool-call-delta', index: 0, argumentsDelta: '{"ci' },
          { type: 'tool-call-start', index: 1, id: 'call_b', name: 'get_time' },
          { type: 'tool-call-delta', index: 1, argumentsDelta: '{"tz":' },
          { type: 'tool-call-delta', index: 0, argumentsDelta: 'ty":"Paris"}' },
          { type: 'tool-call-delta', index: 1, argumentsDelta: '"UTC"}' },
          { type: 'tool-call-end', index: 0 },
          { type: 'tool-call-end', index: 1 },
          { type: 'finish', finishReason: 'tool-calls', usage: { inputTokens: 10, outputTokens: 5 } },
        ],
      },
    ],
    [
      'a call whose id arrives first and name later, with arguments buffered until then',
      {
        given: [
          delta({ tool_calls: [{ index: 0, id: 'call_x', type: 'function', function: { arguments: '{"a"' } }] }),
          delta({ tool_calls: [{ index: 0, function: { name: 'f', arguments: ':1' } }] }),
          delta({ tool_calls: [{ index: 0, function: { arguments: '}' } }] }),
          delta({}, 'tool_calls', { usage: USAGE }),
        ],
        want: [
          { type: 'tool-call-start', index: 0, id: 'call_x', name: 'f' },
          { type: 'tool-call-delta', index: 0, argumentsDelta: '{"a":1' },
          { type: 'tool-call-delta', index: 0, argumentsDelta: '}' },
          { type: 'tool-call-end', index: 0 },
          { type: 'finish', finishReason: 'tool-calls', usage: { inputTokens: 10, outputTokens: 5 } },
        ],
      },
    ],
    [
      'calls without index (routed by id), without id (generated) and finish_reason stop',
      {
        given: [
          delta({ tool_calls: [{ id: 'g1', type: 'function', function: { name: 'f', arguments: '{"x":1}' } }] }),
          delta({ tool_calls: [{ id: 'g2', type: 'function', function: { name: 'g', arguments: '{}' } }] }),
          delta({ tool_calls: [{ index: 5, type: 'function', function: { name: 'h', arguments: { y: 2 } } }] }),
          delta({}, 'stop', { usage: USAGE }),
        ],
        want: [
          { type: 'tool-call-start', index: 0, id: 'g1', name: 'f' },
          { type: 'tool-call-delta', index: 0, argumentsDelta: '{"x":1}' },
          { type: 'tool-call-start', index: 1, id: 'g2', name: 'g' },
          { type: 'tool-call-delta', index: 1, argumentsDelta: '{}' },
          { type: 'tool-call-start', index: 2, id: 'call_gen0', name: 'h' },
          { type: 'tool-call-delta', index: 2, argumentsDelta: '{"y":2}' },
          { type: 'tool-call-end', index: 0 },
          { type: 'tool-call-end', index: 1 },
          { type: 'tool-call-end', index: 2 },
          { type: 'finish', finishReason: 'tool-calls', usage: { inputTokens: 10, outputTokens: 5 } },
        ],
      },
    ],
    [
      'one index reused for a second call with a new id',
      {
        given: [
          delta({ tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] }),
          delta({ tool_calls: [{ index: 0, id: 'c2', type: 'function', function: { name: 'g', arguments: '' } }] }),
          delta({ tool_calls: [{ index: 0, function: { arguments: '{"k":0}' } }] }),
          delta({}, 'tool_calls', { usage: USAGE }),
        ],
        want: [
          { type: 'tool-call-start', index: 0, id: 'c1', name: 'f' },
          { type: 'tool-call-delta', index: 0, argumentsDelta: '{}' },
          { type: 'tool-call-start', index: 1, id: 'c2', name: 'g' },
          { type: 'tool-call-delta', index: 1, argumentsDelta: '{"k":0}' },
          { type: 'tool-call-end', index: 0 },
          { type: 'tool-call-end', index: 1 },
          { type: 'finish', finishReason: 'tool-calls', usage: { inputTokens: 10, outputTokens: 5 } },
        ],
      },
    ],
    [
      'reasoning_content then text, reasoning closed before the text',
      {
        given: [
          delta({ role: 'assistant', content: '' }),
          delta({ reasoning_content: 'Think' }),
          delta({ reasoning_content: 'ing.' }),
          delta({ content: 'Done' }),
          delta({}, 'stop', { usage: { ...USAGE, completion_tokens_details: { reasoning_tokens: 3 } } }),
        ],
        want: [
          { type: 'reasoning-delta', text: 'Think' },
          { type: 'reasoning-delta', text: 'ing.' },
          { type: 'reasoning-end' },
          { type: 'text-delta', text: 'Done' },
          { type: 'finish', finishReason: 'stop', usage: { inputTokens: 10, outputTokens: 5, reasoningTokens: 3 } },
        ],
      },
    ],
    [
      '`reasoning` (Ollama), the same text under both names counted once, reasoning closed before a tool call',
      {
        given: [
          delta({ reasoning: 'Hm' }),
          delta({ reasoning: 'm', reasoning_content: 'm' }),
          delta({ tool_calls: [{ index: 0, id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] }),
          delta({}, 'tool_calls', { usage: USAGE }),
        ],
        want: [
          { type: 'reasoning-delta', text: 'Hm' },
          { type: 'reasoning-delta', text: 'm' },
          { type: 'reasoning-end' },
          { type: 'tool-call-start', index: 0, id: 'c', name: 'f' },
          { type: 'tool-call-delta', index: 0, argumentsDelta: '{}' },
          { type: 'tool-call-end', index: 0 },
          { type: 'finish', finishReason: 'tool-calls', usage: { inputTokens: 10, outputTokens: 5 } },
        ],
      },
    ],
    [
      'a reasoning-only answer, closed before finish, and a vLLM stop string',
      {
        given: [
          delta({ reasoning_content: 'r' }),
          { choices: [{ index: 0, delta: {}, finish_reason: 'stop', stop_reason: '</s>' }], usage: USAGE },
        ],
        want: [
          { type: 'reasoning-delta', text: 'r' },
          { type: 'reasoning-end' },
          { type: 'finish', finishReason: 'stop', stopSequence: '</s>', usage: { inputTokens: 10, outputTokens: 5 } },
        ],
      },
    ],
  ];
  it.each(cases)('decodes %s', async (_name, { given, want }) => {
    expect(await decode(given)).toEqual(want);
  });

  it('estimates usage with the tokenizer when the upstream never sends it', async () => {
    const parts = await decode([delta({ content: 'Hello' }), delta({ content: ' there!' }), delta({}, 'stop')]);
    expect(parts.at(-1)).toEqual({
      type: 'finish',
      finishReason: 'stop',
      usage: { inputTokens: 42, outputTokens: await countTextTokens('Hello there!') },
    });
  });

  it('throws an UpstreamError for an error chunk mid-stream', async () => {
    await expect(
      decode([
        delta({ content: 'a' }),
        { error: { message: 'CUDA out of memory', type: 'InternalServerError', code: 500 } },
      ]),
    ).rejects.toMatchObject({
      status: 502,
      upstreamStatus: 500,
    });
  });

  it('throws when the stream ends without a finish_reason, instead of reporting a normal finish', async () => {
    await expect(decode([delta({ content: 'a' })])).rejects.toBeInstanceOf(UpstreamError);
  });

  it('keeps streamed tool-call arguments intact through the chat encoder', async () => {
    const fragments = ['{"q', 'uery', '": "ca', 'ts', ' \\"and\\" dogs', '", "n": ', '1', '0}'];
    const upstream = [
      delta({
        tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'search', arguments: '' } }],
      }),
      ...fragments.map((fragment) => delta({ tool_calls: [{ index: 0, function: { arguments: fragment } }] })),
      delta({}, 'tool_calls'),
      usageChunk(USAGE),
    ];
    const encoding = encodeChatStream(decodeChatStream(from(upstream), CONTEXT), {
      id: 'x',
      model: 'm',
      created: 1,
      includeUsage: true,
    });
    let args = '';
    let last: unknown;
    for await (const event of encoding.events) {
      for (const call of event.data.choices[0]?.delta.tool_calls ?? []) {
        args += call.function?.arguments ?? '';
      }
      last = event.data;
    }
    expect(JSON.parse(args)).toEqual({ query: 'cats "and" dogs', n: 10 });
    expect(last).toMatchObject({ choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
    expect(encoding.summary()).toEqual({ finishReason: 'tool-calls', usage: { inputTokens: 10, outputTokens: 5 } });
  });
});
