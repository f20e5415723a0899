/**
 * An Anthropic upstream's stream events (already split by an SSE parser and JSON-parsed) → canonical
 * `ChatStreamPart`s.
 *
 * - `text_delta` → `text-delta`; `thinking_delta` → `reasoning-delta`; the block's `signature_delta` is given on
 *   `reasoning-end` when the block stops; a `redacted_thinking` block is one `reasoning-end` with `redactedData`.
 * - `tool_use` blocks → `tool-call-start` (numbered 0, 1, … in order), each `input_json_delta` fragment →
 *   `tool-call-delta` as it came, `tool-call-end` at the block's stop. A block that got no fragment gets its
 *   start `input` (normally `{}`) as its arguments, so the arguments always parse.
 * - Usage: `message_start` gives input and cache counters, `message_delta` the (cumulative) output count and
 *   possibly updated input/cache counters; non-null later values win. The canonical numbers are made once, at
 *   `finish` (see `map-usage.ts`).
 * - An `error` event throws `UpstreamError`: `overloaded_error` → 503, anything else → 502. A stream that ends
 *   before `message_delta` gave a stop reason throws 502: a truncated answer must not look complete.
 */
import { UpstreamError } from '../../core/api-error.js';
import type { ChatStreamPart } from '../../core/chat.js';
import { fromAnthropicStopReason } from './map-stop-reason.js';
import { mergeAnthropicUsage, usageFromCounters, type AnthropicUsageCounters } from './map-usage.js';
import { argumentsFromToolInput } from './tool-input.js';
import type { AnthropicUpstreamStreamEvent, AnthropicUpstreamUsage } from './wire-types.js';

export interface DecodeMessagesStreamOptions {
  /** The provider id, named in errors. */
  provider?: string;
}

type BlockState =
  | { kind: 'text' }
  | { kind: 'thinking'; signature: string }
  | { kind: 'redacted'; data: string }
  | { kind: 'tool'; toolIndex: number; input: unknown; gotFragment: boolean }
  | { kind: 'other' };

type Json = Record<string, unknown>;

function asObject(value: unknown): Json {
  return value !== null && typeof value === 'object' ? (value as Json) : {};
}

export function streamErrorFromEvent(provider: string, data: unknown): UpstreamError {
  const error = asObject(asObject(data).error);
  const type = typeof error.type === 'string' ? error.type : 'api_error';
  const message = typeof error.message === 'string' ? error.message : 'unknown error';
  const status = type === 'overloaded_error' ? 503 : 502;
  return new UpstreamError(
    provider,
    status,
    null,
    `Upstream ${provider} failed mid-stream (${type}): ${message.slice(0, 500)}`,
  );
}

export async function* decodeMessagesStream(
  events: AsyncIterable<AnthropicUpstreamStreamEvent>,
  options: DecodeMessagesStreamOptions = {},
): AsyncGenerator<ChatStreamPart, void, undefined> {
  const provider = options.provider ?? 'anthropic';
  const blocks = new Map<number, BlockState>();
  let toolCount = 0;
  let counters: AnthropicUsageCounters = { input: 0, output: 0 };
  let stopReason: string | null = null;
  let stopSequence: string | null = null;
  let sawStopReason = false;

  const finishPart = (): ChatStreamPart => {
    const part: Extract<ChatStreamPart, { type: 'finish' }> = {
      type: 'finish',
      finishReason: fromAnthropicStopReason(stopReason),
      usage: usageFromCounters(counters),
    };
    if (stopReason === 'stop_sequence' && stopSequence !== null) {
      part.stopSequence = stopSequence;
    }
    return part;
  };

  for await (const event of events) {
    const data = asObject(event.data);
    const type = typeof data.type === 'string' ? data.type : event.event;
    switch (type) {
      case 'message_start':
        counters = mergeAnthropicUsage(counters, asObject(data.message).usage as AnthropicUpstreamUsage | undefined);
        break;
      case 'content_block_start': {
        const index = Number(data.index);
        const block = asObject(data.content_block);
        if (block.type === 'text') {
          blocks.set(index, { kind: 'text' });
          if (typeof block.text === 'string' && block.text !== '') {
            yield { type: 'text-delta', text: block.text };
          }
        } else if (block.type === 'thinking') {
          blocks.set(index, {
            kind: 'thinking',
            signature: typeof block.signature === 'string' ? block.signature : '',
          });
          if (typeof block.thinking === 'string' && block.thinking !== '') {
            yield { type: 'reasoning-delta', text: block.thinking };
          }
        } else if (block.type === 'redacted_thinking') {
          blocks.set(index, { kind: 'redacted', data: String(block.data ?? '') });
        } else if (block.type === 'tool_use') {
          const toolIndex = toolCount++;
          blocks.set(index, { kind: 'tool', toolIndex, input: block.input, gotFragment: false });
          yield { type: 'tool-call-start', index: toolIndex, id: String(block.id), name: String(block.name) };
        } else {
          blocks.set(index, { kind: 'other' });
        }
        break;
      }
      case 'content_block_delta': {
        const state = blocks.get(Number(data.index));
        const delta = asObject(data.delta);
        if (!state) {
          break;
        }
        if (
          delta.type === 'text_delta' &&
          state.kind === 'text' &&
          typeof delta.text === 'string' &&
          delta.text !== ''
        ) {
          yield { type: 'text-delta', text: delta.text };
        } else if (
          delta.type === 'thinking_delta' &&
          state.kind === 'thinking' &&
          typeof delta.thinking === 'string' &&
          delta.thinking !== ''
        ) {
          yield { type: 'reasoning-delta', text: delta.thinking };
        } else if (
          delta.type === 'signature_delta' &&
          state.kind === 'thinking' &&
          typeof delta.signature === 'string'
        ) {
          state.signature += delta.signature;
        } else if (
          delta.type === 'input_json_delta' &&
          state.kind === 'tool' &&
          typeof delta.partial_json === 'string' &&
          delta.partial_json !== ''
        ) {
          state.gotFragment = true;
          yield { type: 'tool-call-delta', index: state.toolIndex, argumentsDelta: delta.partial_json };
        }
        break;
      }
      case 'content_block_stop': {
        const index = Number(data.index);
        const state = blocks.get(index);
        blocks.delete(index);
        if (state?.kind === 'thinking') {
          yield state.signature === ''
            ? { type: 'reasoning-end' }
            : { type: 'reasoning-end', signature: state.signature };
        } else if (state?.kind === 'redacted') {
          yield { type: 'reasoning-end', redactedData: state.data };
        } else if (state?.kind === 'tool') {
          if (!state.gotFragment) {
            yield {
              type: 'tool-call-delta',
              index: state.toolIndex,
              argumentsDelta: argumentsFromToolInput(state.input),
            };
          }
          yield { type: 'tool-call-end', index: state.toolIndex };
        }
        break;
      }
      case 'message_delta': {
        const delta = asObject(data.delta);
        if (typeof delta.stop_reason === 'string') {
          stopReason = delta.stop_reason;
          sawStopReason = true;
        }
        if (typeof delta.stop_sequence === 'string') {
          stopSequence = delta.stop_sequence;
        }
        counters = mergeAnthropicUsage(counters, data.usage as AnthropicUpstreamUsage | undefined);
        break;
      }
      case 'message_stop':
        yield finishPart();
        return;
      case 'error':
        throw streamErrorFromEvent(provider, data);
      default:
        // `ping` and event types added after this was written carry nothing canonical.
        break;
    }
  }
  if (!sawStopReason) {
    throw new UpstreamError(
      provider,
      502,
      null,
      `Upstream ${provider} ended the stream before the message was complete`,
    );
  }
  yield finishPart();
}
