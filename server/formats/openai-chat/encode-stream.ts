/**
 * Canonical `ChatStreamPart`s → `chat.completion.chunk` events of our API (the `data` of each SSE frame).
 *
 * Shape, as OpenAI streams it: a first chunk `delta: {role: "assistant", content: ""}`; text as
 * `delta.content`; reasoning as `delta.reasoning_content`; a tool call as one chunk with `index`, `id`,
 * `type`, `function.name` and `arguments: ""`, then chunks with only `index` and an arguments fragment; a
 * last choice chunk with an empty delta and `finish_reason`. With `includeUsage`, every chunk carries
 * `usage: null` and one more chunk with `choices: []` carries the totals.
 *
 * The first chunk is produced only after the first canonical part has arrived, so an upstream that fails
 * before producing anything fails the first `next()` and the route can still answer with a plain HTTP error.
 *
 * This module writes no `[DONE]` (the route does) and catches nothing: a failure after the start is thrown
 * to the route, which turns it into an error frame. `summary()` tells the route how the stream ended, for
 * usage records; it is `null` until the `finish` part has been seen (for example on client abort).
 */
import { ApiError } from '../../core/api-error.js';
import type { ChatStreamPart, FinishReason, Usage } from '../../core/chat.js';
import { encodeFinishReason } from './map-finish-reason.js';
import { encodeUsage } from './map-usage.js';
import type { ChatCompletionChunk, ChatCompletionChunkDelta, ChatFinishReasonWire } from './wire-types.js';

export interface ChatStreamMeta {
  id: string;
  model: string;
  created: number;
  /** The caller's `stream_options.include_usage`. */
  includeUsage: boolean;
}

export interface ChatStreamSummary {
  finishReason: FinishReason;
  usage: Usage;
}

export interface ChatStreamEncoding {
  /** The chunk events, in order; iterate once. */
  events: AsyncIterable<{ data: ChatCompletionChunk }>;
  /** How the stream finished, once the `finish` part has gone through; `null` before that. */
  summary(): ChatStreamSummary | null;
}

export function encodeChatStream(parts: AsyncIterable<ChatStreamPart>, meta: ChatStreamMeta): ChatStreamEncoding {
  let summary: ChatStreamSummary | null = null;

  function chunk(
    delta: ChatCompletionChunkDelta,
    finishReason: ChatFinishReasonWire | null = null,
  ): { data: ChatCompletionChunk } {
    const data: ChatCompletionChunk = {
      id: meta.id,
      object: 'chat.completion.chunk',
      created: meta.created,
      model: meta.model,
      system_fingerprint: null,
      choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
    };
    if (meta.includeUsage) {
      data.usage = null;
    }
    return { data };
  }

  async function* events(): AsyncGenerator<{ data: ChatCompletionChunk }> {
    const iterator = parts[Symbol.asyncIterator]();
    try {
      // Pull before announcing the role, so an upstream failure surfaces before any event exists.
      let next = await iterator.next();
      yield chunk({ role: 'assistant', content: '' });
      // Canonical indexes number calls within the response but need not be dense; OpenAI clients index an
      // array with the wire index, so calls are renumbered 0, 1, 2… in the order they start.
      const wireIndexes = new Map<number, number>();
      for (; !next.done; next = await iterator.next()) {
        const part = next.value;
        switch (part.type) {
          case 'text-delta':
            if (part.text.length > 0) {
              yield chunk({ content: part.text });
            }
            break;
          case 'reasoning-delta':
            if (part.text.length > 0) {
              yield chunk({ reasoning_content: part.text });
            }
            break;
          case 'tool-call-start': {
            const index = wireIndexes.size;
            wireIndexes.set(part.index, index);
            yield chunk({
              tool_calls: [{ index, id: part.id, type: 'function', function: { name: part.name, arguments: '' } }],
            });
            break;
          }
          case 'tool-call-delta': {
            const index = wireIndexes.get(part.index);
            if (index !== undefined && part.argumentsDelta.length > 0) {
              yield chunk({ tool_calls: [{ index, function: { arguments: part.argumentsDelta } }] });
            }
            break;
          }
          case 'reasoning-end':
          case 'tool-call-end':
            break;
          case 'finish': {
            yield chunk({}, encodeFinishReason(part.finishReason));
            if (meta.includeUsage) {
              const usageChunk = chunk({});
              usageChunk.data.choices = [];
              usageChunk.data.usage = encodeUsage(part.usage);
              yield usageChunk;
            }
            summary = { finishReason: part.finishReason, usage: part.usage };
            return;
          }
        }
      }
      throw new ApiError(502, 'The model stream ended before it finished.', {
        type: 'upstream_error',
        code: 'upstream_error',
      });
    } finally {
      // Stop the producer (and its upstream request) when we return early or our consumer goes away.
      await iterator.return?.();
    }
  }

  return { events: events(), summary: () => summary };
}
