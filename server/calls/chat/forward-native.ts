/**
 * Native passthrough: when the caller speaks the dialect the upstream speaks, the caller's body goes to the
 * upstream with only `model` rewritten, and the upstream's answer comes back byte for byte (JSON) or event
 * for event (SSE, each event's data unchanged). Usage is still parsed from what flowed and recorded.
 *
 * The bytes are relayed, but not blindly: a JSON answer must be JSON and fit the open reading of the
 * operation's response schema (`answer-contract.ts`), and each SSE event's data must be JSON (or `[DONE]`);
 * otherwise the caller gets a 502 `upstream_invalid_response`, or the dialect's error event once the stream
 * started. Events are not checked against the schema: that would cost a validation per token.
 *
 * The one change to a chat-completions stream: when the caller did not ask for usage, we ask the upstream
 * for it (`stream_options.include_usage`) so the call can be billed, and drop that usage-only chunk before it
 * reaches the caller, who did not ask for it.
 */
import type { Response } from 'express';
import { UpstreamError, type ApiError } from '../../core/api-error.js';
import { openSse, type SseEvent } from '../../http/sse.js';
import { readAllBytes } from '../../providers/upstream/read-body.js';
import { sseDecoder, type UpstreamSseEvent } from '../../providers/upstream/read-sse.js';
import type { ChatCallOptions, Dialect, NativePassthrough } from '../../core/chat.js';
import type { ResolvedChat } from './run-chat-call.js';
import { streamFailure } from '../stream-failure.js';
import { countCallInputTokens } from '../../tokens/tokenizer.js';
import { estimatedUsage } from '../../tokens/estimated-usage.js';
import type { AnswerCheck } from './answer-contract.js';
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
  /** The contract check of a whole JSON answer (`answerCheck` of the dialect). */
  checkAnswer: AnswerCheck;
}

/** An answer the caller must not get: logged with its reasons and answered as 502 `upstream_invalid_response`. */
function invalidAnswer(chat: ResolvedChat, upstreamStatus: number, what: string, errors: string[] = []): UpstreamError {
  const provider = chat.resolved.entry.provider;
  chat.logger.warn(
    { requestId: chat.context.requestId, provider, model: chat.resolved.entry.id, errors },
    `passthrough answer rejected: ${what}`,
  );
  return new UpstreamError(provider, 502, upstreamStatus, `Upstream ${provider} ${what}`, {
    code: 'upstream_invalid_response',
  });
}

/** The JSON of a whole answer, or the reason it must not reach the caller. */
function parseAnswer(
  bytes: Buffer,
  contentType: string,
  check: AnswerCheck,
): { json: unknown } | { what: string; errors?: string[] } {
  if (!contentType.includes('json')) {
    return { what: `answered with ${contentType.split(';')[0] || 'no content type'} instead of JSON` };
  }
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch {
    return { what: 'answered with invalid or truncated JSON' };
  }
  const errors = check(json);
  return errors.length > 0 ? { what: 'answered off the contract', errors } : { json };
}

function isUsageOnlyChunk(data: unknown): boolean {
  const chunk = data as { choices?: unknown[]; usage?: unknown } | null;
  return Array.isArray(chunk?.choices) && chunk.choices.length === 0 && chunk.usage != null;
}

export async function forwardNative(
  res: Response,
  chat: ResolvedChat,
  native: NativePassthrough,
  options: ForwardOptions,
): Promise<void> {
  const call = chat.call;
  const body: Record<string, unknown> = { ...options.body, model: chat.resolved.entry.upstreamModel };
  let dropUsageChunk = false;
  if (options.dialect === 'openai-chat' && body.stream === true) {
    const streamOptions = (body.stream_options ?? {}) as Record<string, unknown>;
    if (streamOptions.include_usage !== true) {
      body.stream_options = { ...streamOptions, include_usage: true };
      dropUsageChunk = true;
    }
  }
  // Field by field rather than a spread of the context: see `post` in providers/upstream/http-client.ts.
  const { signal, requestId, warn, attempted } = chat.context;
  const upstream = await native.forward(body, {
    signal,
    requestId,
    warn,
    attempted,
    query: options.query,
    headers: options.headers,
  });
  call.defer();
  const reader = wireUsageReader(options.dialect);
  // The wire's usage, or the tokenizer's estimate when the upstream reported none. Settled before the
  // response ends: on shutdown the usage store closes once the last response has ended.
  const settleUsage = async () => {
    call.usage = reader.usage() ?? (await estimatedUsage(options.estimateInputTokens(), reader.produced()));
  };
  let status = upstream.status;
  try {
    if (!(upstream.headers['content-type'] ?? '').includes('text/event-stream')) {
      const bytes = await readAllBytes(upstream.body);
      const contentType = upstream.headers['content-type'] ?? '';
      const answer = parseAnswer(bytes, contentType, options.checkAnswer);
      if (!('json' in answer)) {
        // Recorded as a 502 (usage falls back to the estimate in `finally`); the error handler answers it.
        status = 502;
        throw invalidAnswer(chat, upstream.status, answer.what, answer.errors);
      }
      reader.json(answer.json);
      await settleUsage();
      // Sent as bytes, not through res.json: the upstream's exact answer is the point of passthrough.
      res.status(upstream.status).type(contentType).send(bytes);
      return;
    }
    const sse = openSse(res);
    let lastEvent: unknown;
    const relay = (event: UpstreamSseEvent): void => {
      if (event.data === '[DONE]') {
        sse.sendRaw('[DONE]');
        return;
      }
      let data: unknown;
      if (event.data.trim() !== '') {
        try {
          data = JSON.parse(event.data);
        } catch {
          // Caught below, which ends the stream with the dialect's error event.
          throw invalidAnswer(chat, upstream.status, 'sent an event that is not JSON');
        }
      }
      lastEvent = data ?? lastEvent;
      reader.event(data);
      if (dropUsageChunk && isUsageOnlyChunk(data)) {
        return;
      }
      sse.send({ event: event.event, data: event.data });
    };
    try {
      // Decoded chunk by chunk, not through readEvents' generator: one promise and resumption fewer per event.
      const events = sseDecoder();
      for await (const chunk of upstream.body) {
        events.push(chunk).forEach(relay);
      }
      events.end().forEach(relay);
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
