import { describe, expect, it } from 'vitest';
import { ApiError, UpstreamError } from '../../core/api-error.js';
import type { ChatResult, ChatStreamPart, ReasoningPart, TextPart, ToolCallPart } from '../../core/chat.js';
import { encodeResponse } from './encode-response.js';
import { encodeResponsesStream, type ResponsesStream } from './encode-stream.js';
import { encodeStreamFailure } from './encode-stream-failure.js';
import { testMeta } from '../../../test/helpers/responses-meta.js';
import type { ResponseStreamEvent, ResponsesWireEvent } from './wire-types.js';

async function* fromArray(parts: ChatStreamPart[]): AsyncIterable<ChatStreamPart> {
  for (const part of parts) {
    yield part;
  }
}

async function collect(stream: ResponsesStream): Promise<ResponsesWireEvent[]> {
  const events: ResponsesWireEvent[] = [];
  for await (const event of stream) {
    events.push(event);
  }
  return events;
}

/** What a provider's `generate` would return for the same parts: the reference for the non-stream encoding. */
function resultOf(parts: ChatStreamPart[]): ChatResult {
  const content: ChatResult['content'] = [];
  const calls = new Map<number, ToolCallPart>();
  let open: TextPart | ReasoningPart | undefined;
  for (const part of parts) {
    switch (part.type) {
      case 'text-delta':
        if (open?.type !== 'text') {
          open = { type: 'text', text: '' };
          content.push(open);
        }
        open.text += part.text;
        break;
      case 'reasoning-delta':
        if (open?.type !== 'reasoning') {
          open = { type: 'reasoning', text: '' };
          content.push(open);
        }
        open.text += part.text;
        break;
      case 'reasoning-end': {
        const reasoning: ReasoningPart = open?.type === 'reasoning' ? open : { type: 'reasoning', text: '' };
        if (open?.type !== 'reasoning') {
          content.push(reasoning);
        }
        Object.assign(
          reasoning,
          part.signature ? { signature: part.signature } : {},
          part.encryptedContent ? { encryptedContent: part.encryptedContent } : {},
        );
        open = undefined;
        break;
      }
      case 'tool-call-start': {
        const call: ToolCallPart = { type: 'tool-call', id: part.id, name: part.name, arguments: '' };
        calls.set(part.index, call);
        content.push(call);
        open = undefined;
        break;
      }
      case 'tool-call-delta':
        calls.get(part.index)!.arguments += part.argumentsDelta;
        break;
      case 'tool-call-end':
        break;
      case 'finish':
        return { content, finishReason: part.finishReason, usage: part.usage };
    }
  }
  throw new Error('no finish');
}

const ARGUMENTS_A = '{"cmd":"echo \\"a b\\"","workdir":"/tmp/ü","timeout_ms":1000}';
const ARGUMENTS_B = '{"city":"Oslo","days":[1,2,3]}';

/** Splits text into fragments of awkward sizes (1, 2, 3, 5, … characters). */
function fragments(text: string): string[] {
  const sizes = [1, 2, 3, 5, 8];
  const out: string[] = [];
  for (let at = 0, i = 0; at < text.length; i++) {
    out.push(text.slice(at, at + sizes[i % sizes.length]));
    at += sizes[i % sizes.length];
  }
  return out;
}

const toolRoundParts: ChatStreamPart[] = [
  { type: 'reasoning-delta', text: 'The user wants ' },
  { type: 'reasoning-delta', text: 'two things.' },
  { type: 'reasoning-end', signature: 'EqQBCkYIBRgCKkA=' },
  { type: 'text-delta', text: 'Running ' },
  { type: 'text-delta', text: 'both.' },
  { type: 'tool-call-start', index: 0, id: 'call_a', name: 'exec_command' },
  ...fragments(ARGUMENTS_A).map(
    (argumentsDelta): ChatStreamPart => ({ type: 'tool-call-delta', index: 0, argumentsDelta }),
  ),
  { type: 'tool-call-end', index: 0 },
  { type: 'tool-call-start', index: 1, id: 'call_b', name: 'weather' },
  ...fragments(ARGUMENTS_B).map(
    (argumentsDelta): ChatStreamPart => ({ type: 'tool-call-delta', index: 1, argumentsDelta }),
  ),
  { type: 'tool-call-end', index: 1 },
  {
    type: 'finish',
    finishReason: 'tool-calls',
    usage: { inputTokens: 2048, outputTokens: 120, cacheReadTokens: 1920, reasoningTokens: 40 },
  },
];

function typesWithoutRepeats(events: ResponsesWireEvent[]): string[] {
  return events
    .map((event) => event.event)
    .filter((type, index, all) => !(type.endsWith('.delta') && all[index - 1] === type));
}

describe('encodeResponsesStream', () => {
  it('emits the exact event sequence, sequence numbers 0..n, intact arguments and the non-stream response', async () => {
    const stream = encodeResponsesStream(fromArray(toolRoundParts), testMeta());
    const events = await collect(stream);

    expect(typesWithoutRepeats(events)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.map((event) => event.data.sequence_number)).toEqual(events.map((_, index) => index));
    expect(events.every((event) => event.event === event.data.type)).toBe(true);

    const data = events.map((event) => event.data);
    const argumentDeltas = (itemId: string) =>
      data
        .filter(
          (event): event is Extract<ResponseStreamEvent, { type: 'response.function_call_arguments.delta' }> =>
            event.type === 'response.function_call_arguments.delta' && event.item_id === itemId,
        )
        .map((event) => event.delta);
    expect(argumentDeltas('fc_3').length).toBeGreaterThan(5);
    expect(argumentDeltas('fc_3').join('')).toBe(ARGUMENTS_A);
    expect(argumentDeltas('fc_4').join('')).toBe(ARGUMENTS_B);
    expect(JSON.parse(argumentDeltas('fc_3').join(''))).toEqual({
      cmd: 'echo "a b"',
      workdir: '/tmp/ü',
      timeout_ms: 1000,
    });

    const textDeltas = data.filter((event) => event.type === 'response.output_text.delta');
    expect(textDeltas).toEqual([
      {
        type: 'response.output_text.delta',
        item_id: 'msg_2',
        output_index: 1,
        content_index: 0,
        delta: 'Running ',
        logprobs: [],
        sequence_number: 11,
      },
      {
        type: 'response.output_text.delta',
        item_id: 'msg_2',
        output_index: 1,
        content_index: 0,
        delta: 'both.',
        logprobs: [],
        sequence_number: 12,
      },
    ]);
    expect(
      data.find((event) => event.type === 'response.function_call_arguments.done' && event.item_id === 'fc_4'),
    ).toMatchObject({
      output_index: 3,
      name: 'weather',
      arguments: ARGUMENTS_B,
    });
    expect(
      data.filter((event) => event.type === 'response.output_item.added').map((event) => 'item' in event && event.item),
    ).toEqual([
      { id: 'rs_1', type: 'reasoning', summary: [] },
      { id: 'msg_2', type: 'message', role: 'assistant', status: 'in_progress', content: [] },
      {
        id: 'fc_3',
        type: 'function_call',
        status: 'in_progress',
        call_id: 'call_a',
        name: 'exec_command',
        arguments: '',
      },
      { id: 'fc_4', type: 'function_call', status: 'in_progress', call_id: 'call_b', name: 'weather', arguments: '' },
    ]);
    expect(
      data.filter((event) => event.type === 'response.output_item.done').map((event) => 'item' in event && event.item),
    ).toEqual([
      {
        id: 'rs_1',
        type: 'reasoning',
        summary: [{ type: 'summary_text', text: 'The user wants two things.' }],
        encrypted_content: 'omnigate.anthropic-signature:EqQBCkYIBRgCKkA=',
      },
      {
        id: 'msg_2',
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'Running both.', annotations: [], logprobs: [] }],
      },
      {
        id: 'fc_3',
        type: 'function_call',
        status: 'completed',
        call_id: 'call_a',
        name: 'exec_command',
        arguments: ARGUMENTS_A,
      },
      {
        id: 'fc_4',
        type: 'function_call',
        status: 'completed',
        call_id: 'call_b',
        name: 'weather',
        arguments: ARGUMENTS_B,
      },
    ]);

    const created = data[0];
    expect(created).toMatchObject({
      type: 'response.created',
      response: { id: 'resp_test1', status: 'in_progress', output: [], usage: null, completed_at: null },
    });

    const completed = data[data.length - 1];
    const nonStream = encodeResponse(resultOf(toolRoundParts), testMeta());
    expect(completed).toEqual({ type: 'response.completed', sequence_number: events.length - 1, response: nonStream });
    expect(nonStream.usage).toEqual({
      input_tokens: 2048,
      input_tokens_details: { cached_tokens: 1920 },
      output_tokens: 120,
      output_tokens_details: { reasoning_tokens: 40 },
      total_tokens: 2168,
    });
    expect(stream.final()).toEqual({
      response: nonStream,
      usage: { inputTokens: 2048, outputTokens: 120, cacheReadTokens: 1920, reasoningTokens: 40 },
    });
  });

  it('starts a new message for text after a tool call', async () => {
    const parts: ChatStreamPart[] = [
      { type: 'text-delta', text: 'First.' },
      { type: 'tool-call-start', index: 0, id: 'call_1', name: 'f' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{}' },
      { type: 'tool-call-end', index: 0 },
      { type: 'text-delta', text: 'Second.' },
      { type: 'finish', finishReason: 'stop', usage: { inputTokens: 3, outputTokens: 4 } },
    ];
    const stream = encodeResponsesStream(fromArray(parts), testMeta());
    await collect(stream);
    const response = stream.final()!.response;
    expect(response.output.map((item) => `${item.type}:${item.id}`)).toEqual([
      'message:msg_1',
      'function_call:fc_2',
      'message:msg_3',
    ]);
    expect(response.output_text).toBe('First.Second.');
    expect(response).toEqual(encodeResponse(resultOf(parts), testMeta()));
  });

  it('names the namespace on added and done items and in the final response; a plain tool gets no namespace key', async () => {
    const parts: ChatStreamPart[] = [
      { type: 'tool-call-start', index: 0, id: 'call_w', name: 'wait_agent' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{"targets":["nobody"],' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '"timeout_ms":10}' },
      { type: 'tool-call-end', index: 0 },
      { type: 'tool-call-start', index: 1, id: 'call_e', name: 'exec_command' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: '{"cmd":"ls"}' },
      { type: 'tool-call-end', index: 1 },
      { type: 'finish', finishReason: 'tool-calls', usage: { inputTokens: 5, outputTokens: 9 } },
    ];
    const meta = () => testMeta({ toolNamespaces: new Map([['wait_agent', 'multi_agent_v1']]) });
    const stream = encodeResponsesStream(fromArray(parts), meta());
    const data = (await collect(stream)).map((event) => event.data);
    const items = (type: ResponseStreamEvent['type']) =>
      data.filter((event) => event.type === type).map((event) => 'item' in event && event.item);
    expect(items('response.output_item.added')).toStrictEqual([
      {
        id: 'fc_1',
        type: 'function_call',
        status: 'in_progress',
        call_id: 'call_w',
        name: 'wait_agent',
        namespace: 'multi_agent_v1',
        arguments: '',
      },
      {
        id: 'fc_2',
        type: 'function_call',
        status: 'in_progress',
        call_id: 'call_e',
        name: 'exec_command',
        arguments: '',
      },
    ]);
    const done = [
      {
        id: 'fc_1',
        type: 'function_call',
        status: 'completed',
        call_id: 'call_w',
        name: 'wait_agent',
        namespace: 'multi_agent_v1',
        arguments: '{"targets":["nobody"],"timeout_ms":10}',
      },
      {
        id: 'fc_2',
        type: 'function_call',
        status: 'completed',
        call_id: 'call_e',
        name: 'exec_command',
        arguments: '{"cmd":"ls"}',
      },
    ];
    expect(items('response.output_item.done')).toStrictEqual(done);
    const response = stream.final()!.response;
    expect(response.output).toStrictEqual(done);
    expect(data[data.length - 1]).toMatchObject({ type: 'response.completed', response: { output: done } });
    expect(response).toStrictEqual(encodeResponse(resultOf(parts), meta()));
  });

  it('keeps a tool call open while reasoning interleaves with its argument tail', async () => {
    const parts: ChatStreamPart[] = [
      { type: 'tool-call-start', index: 0, id: 'call_1', name: 'weather' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{"city":' },
      { type: 'reasoning-delta', text: 'hmm' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '"Oslo"}' },
      { type: 'tool-call-end', index: 0 },
      { type: 'finish', finishReason: 'tool-calls', usage: { inputTokens: 1, outputTokens: 1 } },
    ];
    const stream = encodeResponsesStream(fromArray(parts), testMeta());
    const events = await collect(stream);
    const output = stream.final()!.response.output;
    expect(output).toEqual([
      {
        id: 'fc_1',
        type: 'function_call',
        status: 'completed',
        call_id: 'call_1',
        name: 'weather',
        arguments: '{"city":"Oslo"}',
      },
      { id: 'rs_2', type: 'reasoning', summary: [{ type: 'summary_text', text: 'hmm' }] },
    ]);
    const argumentsDone = events.find((event) => event.event === 'response.function_call_arguments.done');
    expect(argumentsDone?.data).toMatchObject({ item_id: 'fc_1', output_index: 0, arguments: '{"city":"Oslo"}' });
  });

  it('ends a length-limited answer with response.incomplete, equal to the non-stream encoding', async () => {
    const parts: ChatStreamPart[] = [
      { type: 'text-delta', text: 'Once upon' },
      { type: 'text-delta', text: ' a' },
      { type: 'finish', finishReason: 'length', usage: { inputTokens: 10, outputTokens: 2 } },
    ];
    const stream = encodeResponsesStream(fromArray(parts), testMeta());
    const events = await collect(stream);
    const last = events[events.length - 1];
    expect(last.event).toBe('response.incomplete');
    expect(last.data).toMatchObject({
      response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } },
    });
    expect(stream.final()!.response).toEqual(encodeResponse(resultOf(parts), testMeta()));
    expect(stream.final()!.response.output[0]).toMatchObject({ status: 'incomplete' });
  });

  it('emits encrypted reasoning without text as a reasoning item with no summary parts', async () => {
    const parts: ChatStreamPart[] = [
      { type: 'reasoning-end', encryptedContent: 'gAAAA-opaque' },
      { type: 'text-delta', text: 'Hi' },
      { type: 'finish', finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 1 } },
    ];
    const stream = encodeResponsesStream(fromArray(parts), testMeta());
    const events = await collect(stream);
    expect(events.slice(2, 4).map((event) => event.event)).toEqual([
      'response.output_item.added',
      'response.output_item.done',
    ]);
    expect(stream.final()!.response).toEqual(encodeResponse(resultOf(parts), testMeta()));
  });

  it('fails before any event when the upstream rejects the call, so the route can answer with HTTP', async () => {
    async function* rejecting(): AsyncIterable<ChatStreamPart> {
      throw UpstreamError.fromStatus('openai', 429, 'slow down', '7');
    }
    const stream = encodeResponsesStream(rejecting(), testMeta());
    const events: ResponsesWireEvent[] = [];
    await expect(async () => {
      for await (const event of stream) {
        events.push(event);
      }
    }).rejects.toMatchObject({ status: 429, headers: { 'retry-after': '7' } });
    expect(events).toEqual([]);
    expect(stream.state.started).toBe(false);
  });

  it('reports a failure mid-stream as response.failed then error, continuing the sequence numbers', async () => {
    async function* failing(): AsyncIterable<ChatStreamPart> {
      yield { type: 'text-delta', text: 'Partial' };
      yield { type: 'tool-call-start', index: 0, id: 'call_1', name: 'f' };
      yield { type: 'tool-call-delta', index: 0, argumentsDelta: '{"a":' };
      throw UpstreamError.fromStatus('openai', 500, 'boom');
    }
    const stream = encodeResponsesStream(failing(), testMeta());
    const events: ResponsesWireEvent[] = [];
    let failure: unknown;
    try {
      for await (const event of stream) {
        events.push(event);
      }
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(ApiError);
    expect(stream.state.started).toBe(true);
    expect(stream.final()).toBeUndefined();
    const [failed, error] = encodeStreamFailure(failure, stream.state);
    expect(failed.event).toBe('response.failed');
    expect(failed.data.sequence_number).toBe(events.length);
    expect(failed.data).toMatchObject({
      response: {
        status: 'failed',
        error: { code: 'server_error', message: 'Upstream openai failed (500): boom' },
        usage: null,
        output: [
          { id: 'msg_1', type: 'message', status: 'completed', content: [{ type: 'output_text', text: 'Partial' }] },
          { id: 'fc_2', type: 'function_call', status: 'incomplete', arguments: '{"a":' },
        ],
      },
    });
    expect(error).toEqual({
      event: 'error',
      data: {
        type: 'error',
        sequence_number: events.length + 1,
        code: 'upstream_error',
        message: 'Upstream openai failed (500): boom',
        param: null,
      },
    });
  });

  it('reports an unknown failure generically', () => {
    const state = encodeResponsesStream(fromArray([]), testMeta()).state;
    state.nextSequenceNumber = 4;
    const [failed, error] = encodeStreamFailure(new Error('secret internals'), state);
    expect(failed.data).toMatchObject({
      sequence_number: 4,
      response: {
        status: 'failed',
        error: { code: 'server_error', message: 'The response failed because of an internal error.' },
      },
    });
    expect(error.data).toEqual({
      type: 'error',
      sequence_number: 5,
      code: 'server_error',
      message: 'The response failed because of an internal error.',
      param: null,
    });
  });

  it('throws a 502 when the upstream stream ends without a finish', async () => {
    const stream = encodeResponsesStream(fromArray([{ type: 'text-delta', text: 'cut' }]), testMeta());
    await expect(collect(stream)).rejects.toMatchObject({ status: 502 });
  });

  it('stops the upstream iteration when the consumer stops early', async () => {
    let returned = false;
    const upstream: AsyncIterable<ChatStreamPart> = {
      [Symbol.asyncIterator]() {
        return {
          next: async () => ({ done: false, value: { type: 'text-delta', text: 'x' } as ChatStreamPart }),
          return: async () => {
            returned = true;
            return { done: true, value: undefined };
          },
        };
      },
    };
    for await (const event of encodeResponsesStream(upstream, testMeta())) {
      if (event.event === 'response.output_text.delta') {
        break;
      }
    }
    expect(returned).toBe(true);
  });
});
