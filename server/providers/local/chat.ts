/**
 * The built-in chat model: a deterministic reference model (see `reference-reply.ts`) that tokenizes with
 * a real BPE tokenizer, honours max tokens and stop sequences, and streams token by token. It works offline
 * and makes every dialect and every tool-calling client testable without an upstream.
 */
import { ApiError } from '../../core/api-error.js';
import { countCallInputTokens, countTextTokens, splitIntoTokens } from '../../tokens/tokenizer.js';
import type { ChatCallOptions, ChatModel, ChatResult, ChatStreamPart, FinishReason } from '../../core/chat.js';
import type { CallContext } from '../../core/call-context.js';
import { collectStream } from '../../core/collect-stream.js';
import { referenceReply } from './reference-reply.js';
import { extractiveAnswer } from '../../engines/text/extractive-answer.js';

export const LOCAL_CHAT_MODEL_ID = 'local:chat';

/** Cuts the reply at the first stop sequence and at the token budget. */
async function limitText(
  text: string,
  options: ChatCallOptions,
): Promise<{ tokens: string[]; finishReason: FinishReason; stopSequence?: string }> {
  let finishReason: FinishReason = 'stop';
  let stopSequence: string | undefined;
  let limited = text;
  for (const stop of options.stopSequences ?? []) {
    const at = stop ? limited.indexOf(stop) : -1;
    if (at >= 0) {
      limited = limited.slice(0, at);
      stopSequence = stop;
    }
  }
  let tokens = await splitIntoTokens(limited);
  if (options.maxOutputTokens !== undefined && tokens.length > options.maxOutputTokens) {
    tokens = tokens.slice(0, options.maxOutputTokens);
    finishReason = 'length';
    stopSequence = undefined;
  }
  return { tokens, finishReason, stopSequence };
}

/**
 * Between streamed tokens, lets other requests run and stops promptly once the caller is gone. A whole
 * (non-streamed) answer skips the event-loop hop: nobody watches it arrive, and the hop per token was most
 * of the model's cost in `npm run bench`.
 */
async function nextTick(signal: AbortSignal, pace: boolean): Promise<void> {
  if (pace) {
    await new Promise((resolve) => setImmediate(resolve));
  }
  if (signal.aborted) {
    throw new ApiError(499, 'The client closed the request.', { code: 'client_closed_request' });
  }
}

async function* streamReply(
  options: ChatCallOptions,
  context: CallContext,
  pace = true,
): AsyncGenerator<ChatStreamPart> {
  if (options.temperature !== undefined && options.temperature !== 0 && options.temperature !== 1) {
    context.warn({ field: 'temperature', reason: 'the reference model is deterministic' });
  }
  const inputTokens = await countCallInputTokens(options);
  const reply = referenceReply(options);
  let outputTokens = 0;
  let reasoningTokens = 0;
  if (reply.reasoning) {
    for (const piece of await splitIntoTokens(reply.reasoning)) {
      await nextTick(context.signal, pace);
      yield { type: 'reasoning-delta', text: piece };
      reasoningTokens += 1;
    }
    yield { type: 'reasoning-end' };
  }
  if (reply.kind === 'tool-call') {
    const id = `call_${context.requestId.slice(-12)}0`;
    yield { type: 'tool-call-start', index: 0, id, name: reply.name };
    for (const piece of await splitIntoTokens(reply.arguments)) {
      await nextTick(context.signal, pace);
      yield { type: 'tool-call-delta', index: 0, argumentsDelta: piece };
    }
    yield { type: 'tool-call-end', index: 0 };
    outputTokens = (await countTextTokens(reply.name)) + (await countTextTokens(reply.arguments));
    yield {
      type: 'finish',
      finishReason: 'tool-calls',
      usage: { inputTokens, outputTokens: outputTokens + reasoningTokens, reasoningTokens },
    };
    return;
  }
  const { tokens, finishReason, stopSequence } = await limitText(reply.text, options);
  for (const piece of tokens) {
    await nextTick(context.signal, pace);
    yield { type: 'text-delta', text: piece };
    outputTokens += 1;
  }
  yield {
    type: 'finish',
    finishReason,
    stopSequence,
    usage: { inputTokens, outputTokens: outputTokens + reasoningTokens, reasoningTokens },
  };
}

export function createLocalChatModel(): ChatModel {
  return {
    provider: 'local',
    modelId: 'chat',
    stream: (options, context) => streamReply(options, context),
    generate(options, context): Promise<ChatResult> {
      return collectStream(streamReply(options, context, false));
    },
    async countTokens(options) {
      return countCallInputTokens(options);
    },
    // The built-in writer of search answers: quoted sentences, every one cited.
    writeFromSources: (query, sources) => extractiveAnswer(query, sources),
  };
}
