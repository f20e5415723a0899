/**
 * Reads what a caller of each dialect got back (a JSON answer or an SSE stream) into one comparable outcome:
 * text, tool calls, the dialect's own finish/stop name and the dialect's own usage object. Every SSE event is
 * validated against its schema in openapi/api.yaml on the way, and each stream's framing rules are checked
 * (`[DONE]` last for chat; `event:` equal to `data.type`, increasing `sequence_number` for Responses; the Anthropic
 * event order), so a stream that only looks right to a lenient parser fails here.
 */
import { expect } from 'vitest';
import { readSse } from '../helpers/read-sse.js';
import { assertMatchesSchema } from '../helpers/spec-schemas.js';
import type { CallerDialect } from './conversation.js';

type Json = Record<string, any>;

export interface OutcomeToolCall {
  id: string;
  name: string;
  /** The arguments as JSON text (Anthropic `input` objects are stringified). */
  arguments: string;
  /** How many events carried argument fragments (1 for JSON answers). */
  fragments: number;
}

export interface Outcome {
  text: string;
  toolCalls: OutcomeToolCall[];
  /**
   * chat: `finish_reason`; responses: `status`, with `:reason` when incomplete; anthropic: `stop_reason`.
   */
  finish: string;
  /** The dialect's usage object as the caller finally sees it (chat: null when the stream carried none). */
  usage: Json | null;
  /** Responses only: the response id (for `previous_response_id`). */
  responseId?: string;
  /** Stream only: the data strings of the events, in order (chat's `[DONE]` included). */
  events?: Array<{ event?: string; data: string }>;
}

export interface ReadOptions {
  /**
   * Validate each SSE event against the contract (default true). Native passthrough relays the upstream's own
   * events byte for byte; the matrix checks those against what the fake sent instead (see the contract-gap tests).
   */
  validate?: boolean;
}

type Validate = (schema: string, data: unknown) => void;

export function readOutcome(
  dialect: CallerDialect,
  stream: boolean,
  bodyText: string,
  options: ReadOptions = {},
): Outcome {
  const validate: Validate = options.validate === false ? () => {} : assertMatchesSchema;
  if (!stream) {
    const body = JSON.parse(bodyText) as Json;
    switch (dialect) {
      case 'chat':
        return chatJson(body);
      case 'responses':
        return responsesJson(body);
      case 'anthropic':
        return anthropicJson(body);
    }
  }
  const events = readSse(bodyText);
  expect(events.length, 'the stream carried no events').toBeGreaterThan(0);
  switch (dialect) {
    case 'chat':
      return { ...chatStream(events, validate), events };
    case 'responses':
      return { ...responsesStream(events, validate), events };
    case 'anthropic':
      return { ...anthropicStream(events, validate), events };
  }
}

// ---------------------------------------------------------------- chat completions

function chatJson(body: Json): Outcome {
  expect(body.object).toBe('chat.completion');
  expect(body.choices).toHaveLength(1);
  const message = body.choices[0].message as Json;
  expect(message.role).toBe('assistant');
  const toolCalls = ((message.tool_calls ?? []) as Json[]).map((call) => {
    expect(call.type).toBe('function');
    return {
      id: call.id as string,
      name: call.function.name as string,
      arguments: call.function.arguments as string,
      fragments: 1,
    };
  });
  return {
    text: (message.content as string | null) ?? '',
    toolCalls,
    finish: body.choices[0].finish_reason as string,
    usage: body.usage ?? null,
  };
}

function chatStream(events: Array<{ event?: string; data: string }>, validateEvent: Validate): Omit<Outcome, 'events'> {
  expect(events.at(-1)?.data, 'a chat stream ends with [DONE]').toBe('[DONE]');
  expect(events.filter((event) => event.data === '[DONE]')).toHaveLength(1);
  let text = '';
  let finish: string | undefined;
  let usage: Json | null = null;
  const calls = new Map<number, OutcomeToolCall>();
  const ids = new Set<string>();
  for (const event of events.slice(0, -1)) {
    const chunk = JSON.parse(event.data) as Json;
    validateEvent('ChatCompletionStreamEvent', chunk);
    validateEvent('ChatCompletionChunk', chunk);
    expect(chunk.object).toBe('chat.completion.chunk');
    ids.add(chunk.id as string);
    if (chunk.usage) {
      usage = chunk.usage as Json;
    }
    const choice = (chunk.choices as Json[]).find((candidate) => candidate.index === 0);
    if (!choice) {
      continue;
    }
    expect(finish, 'no delta after finish_reason').toBeUndefined();
    const delta = (choice.delta ?? {}) as Json;
    if (typeof delta.content === 'string') {
      text += delta.content;
    }
    for (const fragment of (delta.tool_calls ?? []) as Json[]) {
      const index = fragment.index as number;
      let call = calls.get(index);
      if (!call) {
        expect(fragment.id, 'the first fragment of a tool call carries its id').toEqual(expect.any(String));
        expect(fragment.function?.name, 'the first fragment of a tool call carries its name').toEqual(
          expect.any(String),
        );
        call = { id: fragment.id as string, name: fragment.function.name as string, arguments: '', fragments: 0 };
        calls.set(index, call);
      }
      const piece = fragment.function?.arguments;
      if (typeof piece === 'string' && piece !== '') {
        call.arguments += piece;
        call.fragments += 1;
      }
    }
    if (choice.finish_reason) {
      finish = choice.finish_reason as string;
    }
  }
  expect(ids.size, 'every chunk of one completion has the same id').toBe(1);
  expect(finish, 'a chunk carried a finish_reason').toBeDefined();
  return { text, toolCalls: [...calls.values()], finish: finish!, usage };
}

// ---------------------------------------------------------------- Responses

function responsesFinish(response: Json): string {
  return response.status === 'incomplete'
    ? `incomplete:${response.incomplete_details?.reason}`
    : (response.status as string);
}

function responsesJson(body: Json): Outcome {
  expect(body.object).toBe('response');
  return responseOutcome(body);
}

function responseOutcome(response: Json): Outcome {
  let text = '';
  const toolCalls: OutcomeToolCall[] = [];
  for (const item of response.output as Json[]) {
    if (item.type === 'message') {
      expect(item.role).toBe('assistant');
      for (const part of item.content as Json[]) {
        if (part.type === 'output_text') {
          text += part.text as string;
        }
      }
    } else if (item.type === 'function_call') {
      toolCalls.push({
        id: item.call_id as string,
        name: item.name as string,
        arguments: item.arguments as string,
        fragments: 1,
      });
    }
  }
  return {
    text,
    toolCalls,
    finish: responsesFinish(response),
    usage: response.usage ?? null,
    responseId: response.id as string,
  };
}

function responsesStream(
  events: Array<{ event?: string; data: string }>,
  validateEvent: Validate,
): Omit<Outcome, 'events'> {
  let sequence = -1;
  let deltaText = '';
  const argumentDeltas = new Map<string, { text: string; count: number }>();
  let final: Json | undefined;
  for (const event of events) {
    expect(event.data, 'a Responses stream has no [DONE]').not.toBe('[DONE]');
    const data = JSON.parse(event.data) as Json;
    validateEvent('ResponseStreamEvent', data);
    if (event.event !== undefined) {
      expect(event.event, 'the SSE event name is the data type').toBe(data.type);
    }
    expect(data.sequence_number, 'sequence numbers increase by one').toBe(sequence + 1);
    sequence = data.sequence_number as number;
    expect(final, 'nothing after the terminal event').toBeUndefined();
    switch (data.type) {
      case 'response.output_text.delta':
        deltaText += data.delta as string;
        break;
      case 'response.function_call_arguments.delta': {
        const entry = argumentDeltas.get(data.item_id as string) ?? { text: '', count: 0 };
        entry.text += data.delta as string;
        entry.count += 1;
        argumentDeltas.set(data.item_id as string, entry);
        break;
      }
      case 'response.completed':
      case 'response.incomplete':
      case 'response.failed':
        final = data.response as Json;
        expect(final.status).toBe(data.type.slice('response.'.length));
        break;
      case 'error':
        throw new Error(`the stream reported an error: ${event.data}`);
    }
  }
  expect((JSON.parse(events[0].data) as Json).type).toBe('response.created');
  expect(final, 'the stream ended with response.completed/incomplete').toBeDefined();
  const outcome = responseOutcome(final!);
  expect(deltaText, 'the text deltas add up to the final text').toBe(outcome.text);
  const finalCalls = (final!.output as Json[]).filter((item) => item.type === 'function_call');
  for (const [index, call] of outcome.toolCalls.entries()) {
    const deltas = argumentDeltas.get(finalCalls[index].id as string);
    expect(deltas?.text, 'the argument deltas add up to the final arguments').toBe(call.arguments);
    call.fragments = deltas?.count ?? 0;
  }
  return outcome;
}

// ---------------------------------------------------------------- Anthropic Messages

function anthropicJson(body: Json): Outcome {
  expect(body.type).toBe('message');
  expect(body.role).toBe('assistant');
  let text = '';
  const toolCalls: OutcomeToolCall[] = [];
  for (const block of body.content as Json[]) {
    if (block.type === 'text') {
      text += block.text as string;
    } else if (block.type === 'tool_use') {
      toolCalls.push({
        id: block.id as string,
        name: block.name as string,
        arguments: JSON.stringify(block.input),
        fragments: 1,
      });
    }
  }
  return { text, toolCalls, finish: body.stop_reason as string, usage: body.usage ?? null };
}

/** Later non-null counters replace earlier ones, as the Anthropic SDK accumulates them. */
function mergeUsage(into: Json, usage: Json | undefined): Json {
  const merged = { ...into };
  for (const [key, value] of Object.entries(usage ?? {})) {
    if (value !== null && value !== undefined) {
      merged[key] = value;
    }
  }
  return merged;
}

function anthropicStream(
  events: Array<{ event?: string; data: string }>,
  validateEvent: Validate,
): Omit<Outcome, 'events'> {
  const types: string[] = [];
  let text = '';
  let usage: Json = {};
  let finish: string | undefined;
  const blocks = new Map<number, { kind: string; call?: OutcomeToolCall }>();
  const toolCalls: OutcomeToolCall[] = [];
  for (const event of events) {
    const data = JSON.parse(event.data) as Json;
    validateEvent('AnthropicStreamEvent', data);
    expect(event.event, 'Anthropic events are named, and the name is the data type').toBe(data.type);
    types.push(data.type as string);
    switch (data.type) {
      case 'message_start':
        expect(types).toHaveLength(1);
        expect(data.message.usage, 'message_start carries usage').toBeDefined();
        usage = mergeUsage({}, data.message.usage as Json);
        break;
      case 'content_block_start': {
        expect(blocks.has(data.index as number), 'a block index is used once').toBe(false);
        const block = data.content_block as Json;
        if (block.type === 'tool_use') {
          const call = { id: block.id as string, name: block.name as string, arguments: '', fragments: 0 };
          toolCalls.push(call);
          blocks.set(data.index as number, { kind: 'tool_use', call });
        } else {
          blocks.set(data.index as number, { kind: block.type as string });
          if (block.type === 'text') {
            text += block.text as string;
          }
        }
        break;
      }
      case 'content_block_delta': {
        const block = blocks.get(data.index as number);
        expect(block, 'a delta belongs to a started block').toBeDefined();
        const delta = data.delta as Json;
        if (delta.type === 'text_delta') {
          expect(block!.kind).toBe('text');
          text += delta.text as string;
        } else if (delta.type === 'input_json_delta') {
          expect(block!.kind).toBe('tool_use');
          if (delta.partial_json !== '') {
            block!.call!.arguments += delta.partial_json as string;
            block!.call!.fragments += 1;
          }
        }
        break;
      }
      case 'message_delta':
        finish = data.delta.stop_reason as string;
        usage = mergeUsage(usage, data.usage as Json);
        break;
      case 'error':
        throw new Error(`the stream reported an error: ${event.data}`);
    }
  }
  expect(types.at(-1), 'the stream ends with message_stop').toBe('message_stop');
  expect(types.at(-2)).toBe('message_delta');
  for (const call of toolCalls) {
    if (call.arguments === '') {
      call.arguments = '{}';
    }
  }
  expect(finish).toBeDefined();
  return { text, toolCalls, finish: finish!, usage };
}
