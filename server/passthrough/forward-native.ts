/**
 * Native passthrough: when the caller speaks the dialect the upstream speaks, the caller's body goes to the
 * upstream with only `model` rewritten, and the upstream's answer comes back byte for byte (JSON) or event
 * for event (SSE, each event's data unchanged). Usage is still parsed from what flowed and recorded.
 *
 * The one change to a chat-completions stream: when the caller did not ask for usage, we ask the upstream
 * for it (`stream_options.include_usage`) so the call can be billed, and drop that usage-only chunk before it
 * reaches the caller, who did not ask for it.
 */
import type { Response } from 'express';
import { createParser } from 'eventsource-parser';
import type { ApiError } from '../http/api-error.js';
import type { CallRecord } from '../http/call-record.js';
import { openSse, type SseEvent } from '../http/sse.js';
import { readAllBytes } from '../providers/read-body.js';
import type { ChatCallOptions, Dialect, NativePassthrough } from '../providers/types.js';
import { streamFailure, type ResolvedChat } from '../routes/run-text-call.js';
import { countCallInputTokens } from '../tokens/tokenizer.js';
import { wireUsageReader } from './wire-usage.js';

export interface ForwardOptions {
  dialect: Dialect;
  body: Record<string, unknown>;
  query?: string;
  headers?: Record<string, string>;
  /** Events reporting a failure after the stream started, in the caller's dialect. */
  failure(error: ApiError, lastEvent: unknown): SseEvent[];
  /** Input tokens counted with the tokenizer, for an upstream that reports no usage. */
  estimateInputTokens(): Promise<number>;
}

function isUsageOnlyChunk(data: unknown): boolean {
  const chunk = data as { choices?: unknown[]; usage?: unknown } | null;
  return Array.isArray(chunk?.choices) && chunk.choices.length === 0 && chunk.usage != null;
}

export async function forwardNative(res: Response, chat: ResolvedChat, native: NativePassthrough, options: ForwardOptions): Promise<void> {
  const call = res.locals.call as CallRecord;
  const body: Record<string, unknown> = { ...options.body, model: chat.resolved.entry.upstreamModel };
  let dropUsageChunk = false;
  if (options.dialect === 'openai-chat' && body.stream === true) {
    const streamOptions = (body.stream_options ?? {}) as Record<string, unknown>;
    if (streamOptions.include_usage !== true) {
      body.stream_options = { ...streamOptions, include_usage: true };
      dropUsageChunk = true;
    }
  }
  const upstream = await native.forward(body, { ...chat.context, query: options.query, headers: options.headers });
  call.defer();
  const reader = wireUsageReader(options.dialect);
  // The wire's usage, or the tokenizer's estimate when the upstream reported none. Settled before the
  // response ends: on shutdown the usage store closes once the last response has ended.
  const settleUsage = async () => {
    call.usage = reader.usage() ?? { inputTokens: await options.estimateInputTokens(), outputTokens: await reader.produced().countTokens() };
  };
  let status = upstream.status;
  try {
    if (!(upstream.headers['content-type'] ?? '').includes('text/event-stream')) {
      const bytes = await readAllBytes(upstream.body);
      try {
        reader.json(JSON.parse(bytes.toString('utf8')));
      } catch {
        // Not JSON after all: relayed as is; usage falls back to the estimate in `finally`.
      }
      await settleUsage();
      // Sent as bytes, not through res.json: the upstream's exact answer is the point of passthrough.
      res.status(upstream.status).type(upstream.headers['content-type'] ?? 'application/json').send(bytes);
      return;
    }
    const sse = openSse(res);
    let lastEvent: unknown;
    const parser = createParser({
      onEvent(event) {
        if (event.data === '[DONE]') {
          sse.sendRaw('[DONE]');
          return;
        }
        let data: unknown;
        try {
          data = JSON.parse(event.data);
        } catch {
          data = undefined;
        }
        lastEvent = data ?? lastEvent;
        reader.event(data);
        if (dropUsageChunk && isUsageOnlyChunk(data)) {
          return;
        }
        sse.send({ event: event.event, data: event.data });
      },
    });
    const decoder = new TextDecoder();
    try {
      for await (const chunk of upstream.body) {
        parser.feed(decoder.decode(chunk, { stream: true }));
      }
    } catch (error) {
      const failure = streamFailure(chat, error);
      status = failure.status;
      for (const event of options.failure(failure.error, lastEvent)) {
        sse.send(event);
      }
    }
    await settleUsage();
    sse.end();
  } finally {
    if (!call.usage) {
      await settleUsage();
    }
    call.complete(status);
  }
}

/**
 * Input tokens of a passthrough body by the tokenizer, decoded with the caller's codec only when needed;
 * 0 when the body cannot be decoded on its own (it was relayed as is; the upstream judged it).
 */
export async function estimateInputTokens(decode: () => ChatCallOptions): Promise<number> {
  try {
    return await countCallInputTokens(decode());
  } catch {
    return 0;
  }
}
