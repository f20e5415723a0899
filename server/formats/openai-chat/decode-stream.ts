/**
 * An upstream's `chat.completion.chunk` objects (already parsed from SSE) → canonical `ChatStreamPart`s.
 *
 * What real OpenAI-compatible servers do, and how it is handled:
 * - tool-call arguments split across many chunks, several calls interleaved by `index`: fragments are
 *   routed by `index` and each call gets a canonical index in the order it starts;
 * - a call's id and name in its first fragment, arguments later; or arguments before the name arrives
 *   (buffered until the call can be announced); calls without ids (an id is generated); calls without
 *   `index` (Gemini's compatibility layer: routed by id); one `index` reused for a second call with a new id
 *   (some llama.cpp builds: treated as a new call);
 * - reasoning as `delta.reasoning_content` (vLLM, DeepSeek) or `delta.reasoning` (Ollama, OpenRouter);
 * - `finish_reason` first and usage in a later `choices: []` chunk, or both in one chunk: the `finish` part
 *   is emitted only when the upstream stream has ended, with the last usage seen;
 * - an `error` object in a chunk (vLLM, OpenRouter): thrown as `UpstreamError`;
 * - a stream that ends without any `finish_reason` was cut: thrown, never reported as a normal finish.
 * Every started call gets `tool-call-end` before the single `finish`.
 */
import { UpstreamError } from '../../core/api-error.js';
import type { ChatStreamPart, FinishReason, Usage } from '../../core/chat.js';
import { reasoningText } from './decode-response.js';
import { decodeUpstreamError } from './decode-upstream-error.js';
import { BoundedText } from '../../tokens/bounded-text.js';
import { estimateUsage } from './estimate-usage.js';
import { decodeFinishReason } from './map-finish-reason.js';
import { decodeUsage } from './map-usage.js';
import { toolCallArgumentsText } from './tool-call-arguments.js';
import { generateToolCallId, type UpstreamDecodeContext } from './upstream-decode-context.js';
import type { UpstreamChatCompletion, UpstreamToolCall } from './wire-types.js';

interface StreamedCall {
  id?: string;
  name?: string;
  /** Set once `tool-call-start` has been emitted. */
  index?: number;
  /** Argument fragments that arrived before the name. */
  buffered: string;
}

export async function* decodeChatStream(
  chunks: AsyncIterable<UpstreamChatCompletion>,
  context: UpstreamDecodeContext = { provider: 'upstream' },
): AsyncGenerator<ChatStreamPart> {
  const newId = context.generateToolCallId ?? generateToolCallId;
  const calls = new Map<string, StreamedCall>();
  const keyByIndex = new Map<number, string>();
  const keyById = new Map<string, string>();
  let lastKey: string | undefined;
  let startedCalls = 0;
  let rawFinishReason: string | undefined;
  let stopSequence: string | undefined;
  let usage: Usage | undefined;
  let reasoningOpen = false;
  const produced = new BoundedText();

  function resolveKey(fragment: UpstreamToolCall): string {
    const id = typeof fragment.id === 'string' && fragment.id.length > 0 ? fragment.id : undefined;
    const name = fragment.function?.name;
    let key: string | undefined;
    if (typeof fragment.index === 'number') {
      key = keyByIndex.get(fragment.index);
      const existing = key === undefined ? undefined : calls.get(key);
      if (
        existing?.id !== undefined &&
        id !== undefined &&
        id !== existing.id &&
        typeof name === 'string' &&
        name.length > 0
      ) {
        key = undefined;
      }
      if (key === undefined) {
        key = `call-${calls.size}`;
        keyByIndex.set(fragment.index, key);
      }
    } else if (id !== undefined) {
      key = keyById.get(id) ?? `call-${calls.size}`;
    } else {
      key = lastKey ?? `call-${calls.size}`;
    }
    if (id !== undefined && !keyById.has(id)) {
      keyById.set(id, key);
    }
    return key;
  }

  function* closeReasoning(): Generator<ChatStreamPart> {
    if (reasoningOpen) {
      reasoningOpen = false;
      yield { type: 'reasoning-end' };
    }
  }

  function* start(call: StreamedCall): Generator<ChatStreamPart> {
    yield* closeReasoning();
    call.index = startedCalls++;
    call.id ??= newId();
    const name = call.name ?? '';
    produced.append(name);
    yield { type: 'tool-call-start', index: call.index, id: call.id, name };
    if (call.buffered.length > 0) {
      produced.append(call.buffered);
      yield { type: 'tool-call-delta', index: call.index, argumentsDelta: call.buffered };
      call.buffered = '';
    }
  }

  for await (const chunk of chunks) {
    if (chunk.error !== undefined && chunk.error !== null) {
      throw decodeUpstreamError(context.provider, chunk.error);
    }
    usage = decodeUsage(chunk.usage) ?? usage;
    const choice = chunk.choices?.find((candidate) => (candidate.index ?? 0) === 0);
    if (!choice) {
      continue;
    }
    const delta = choice.delta ?? {};

    const reasoning = reasoningText(delta);
    if (reasoning.length > 0) {
      reasoningOpen = true;
      produced.append(reasoning);
      yield { type: 'reasoning-delta', text: reasoning };
    }

    const text = typeof delta.content === 'string' ? delta.content : '';
    if (text.length > 0) {
      yield* closeReasoning();
      produced.append(text);
      yield { type: 'text-delta', text };
    }

    for (const fragment of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
      if (!fragment || typeof fragment !== 'object') {
        continue;
      }
      const key = resolveKey(fragment);
      lastKey = key;
      let call = calls.get(key);
      if (!call) {
        call = { buffered: '' };
        calls.set(key, call);
      }
      if (call.id === undefined && typeof fragment.id === 'string' && fragment.id.length > 0) {
        call.id = fragment.id;
      }
      if (call.name === undefined && typeof fragment.function?.name === 'string' && fragment.function.name.length > 0) {
        call.name = fragment.function.name;
      }
      const argumentsDelta = toolCallArgumentsText(fragment.function?.arguments);
      if (call.index === undefined) {
        call.buffered += argumentsDelta;
        if (call.name !== undefined) {
          yield* start(call);
        }
      } else if (argumentsDelta.length > 0) {
        produced.append(argumentsDelta);
        yield { type: 'tool-call-delta', index: call.index, argumentsDelta };
      }
    }

    if (typeof choice.finish_reason === 'string' && choice.finish_reason.length > 0) {
      rawFinishReason = choice.finish_reason;
    }
    if (typeof choice.stop_reason === 'string') {
      stopSequence = choice.stop_reason;
    }
  }

  if (rawFinishReason === undefined) {
    throw new UpstreamError(
      context.provider,
      502,
      null,
      `Upstream ${context.provider} ended the stream before it finished`,
    );
  }
  yield* closeReasoning();
  for (const call of calls.values()) {
    if (call.index === undefined) {
      // Arguments without a name ever arriving: still announced, so no produced data is lost.
      yield* start(call);
    }
    yield { type: 'tool-call-end', index: call.index as number };
  }
  const finishReason: FinishReason = decodeFinishReason(rawFinishReason, calls.size > 0);
  // Older llama.cpp and LM Studio builds ignore `include_usage`: estimate (see estimate-usage.ts).
  usage ??= await estimateUsage(context, produced);
  const finish: Extract<ChatStreamPart, { type: 'finish' }> = { type: 'finish', finishReason, usage };
  if (stopSequence !== undefined && finishReason === 'stop') {
    finish.stopSequence = stopSequence;
  }
  yield finish;
}
