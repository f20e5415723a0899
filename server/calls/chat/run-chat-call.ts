/**
 * Runs one translated text-generation call for any dialect (prepared by `prepareCall(…, 'chat')`): call the
 * provider (whole or streamed), hand the canonical result or parts to the dialect's encoder, and record usage
 * exactly once — from the
 * provider's `finish` part, or, when the stream broke off (client gone, upstream failed), from what was
 * produced so far. The dialect-specific parts come in as functions; this file knows no wire format.
 */
import type { Response } from 'express';
import type { ApiError } from '../../core/api-error.js';
import { openSse, type SseEvent } from '../../http/sse.js';
import type { ChatCallOptions, ChatResult, ChatStreamPart, Usage } from '../../core/chat.js';
import type { PreparedCall } from '../prepare-call.js';
import { streamFailure } from '../stream-failure.js';
import { BoundedText } from '../../tokens/bounded-text.js';
import { countCallInputTokens } from '../../tokens/tokenizer.js';
import { estimatedUsage } from '../../tokens/estimated-usage.js';

/** A prepared chat call: the model, its context, and what a failure needs to know. */
export type ResolvedChat = PreparedCall<'chat'>;

/** Whole answer: generate, record usage, send the encoded JSON. */
export async function sendGenerated(
  res: Response,
  chat: ResolvedChat,
  options: ChatCallOptions,
  /** The answer's body; a promise when something is kept first (a stored response, before its id is answered). */
  encode: (result: ChatResult) => unknown,
): Promise<void> {
  const result = await chat.model.generate(options, chat.context);
  chat.call.usage = result.usage;
  res.json(await encode(result));
}

export interface StreamEncoding {
  /** Canonical parts → this dialect's events. */
  encode(parts: AsyncIterable<ChatStreamPart>): AsyncIterable<SseEvent>;
  /** The events that report a failure after the stream started. */
  failure(error: ApiError): SseEvent[];
  /** A final raw `data:` line, e.g. `[DONE]` for chat completions. */
  terminator?: string;
}

/** Watches the canonical parts as they pass, so usage can be recorded even if the stream breaks off. */
function tap(
  first: IteratorResult<ChatStreamPart>,
  iterator: AsyncIterator<ChatStreamPart>,
  seen: { usage?: Usage; produced: BoundedText },
) {
  return (async function* () {
    let step = first;
    while (!step.done) {
      const part = step.value;
      if (part.type === 'finish') {
        seen.usage = part.usage;
      } else if (part.type === 'text-delta' || part.type === 'reasoning-delta') {
        seen.produced.append(part.text);
      } else if (part.type === 'tool-call-delta') {
        seen.produced.append(part.argumentsDelta);
      } else if (part.type === 'tool-call-start') {
        seen.produced.append(part.name);
      }
      yield part;
      step = await iterator.next();
    }
  })();
}

/**
 * Streamed answer. The first part is awaited before any header is written, so an upstream that refuses
 * the call still gets a plain HTTP error in the family's envelope; after that, failures become events.
 */
export async function sendStreamed(
  res: Response,
  chat: ResolvedChat,
  options: ChatCallOptions,
  encoding: StreamEncoding,
): Promise<void> {
  const call = chat.call;
  const iterator = chat.model.stream(options, chat.context)[Symbol.asyncIterator]();
  const first = await iterator.next();
  call.defer();
  const seen: { usage?: Usage; produced: BoundedText } = { produced: new BoundedText() };
  const sse = openSse(res);
  let status = 200;
  try {
    for await (const event of encoding.encode(tap(first, iterator, seen))) {
      sse.send(event);
    }
    if (encoding.terminator) {
      sse.sendRaw(encoding.terminator);
    }
  } catch (error) {
    const failure = streamFailure(chat, error);
    const apiError = failure.error;
    status = failure.status;
    if (status !== 499) {
      chat.logger.error(
        { requestId: chat.context.requestId, status, err: apiError.cause ?? error },
        `stream failed after it started: ${apiError.message}`,
      );
    }
    for (const event of encoding.failure(apiError)) {
      sse.send(event);
    }
  } finally {
    await iterator.return?.();
    // Without a finish part the provider never reported usage: count what was asked and produced. Counted
    // before the response ends: on shutdown the usage store closes once the last response has ended.
    call.usage = seen.usage ?? (await estimatedUsage(countCallInputTokens(options), seen.produced));
    sse.end();
    call.complete(status);
  }
}
