/**
 * Canonical `ChatStreamPart`s → Anthropic Messages stream events (`message_start`, `content_block_*`,
 * `message_delta`, `message_stop`, `ping`). Events are `{event, data}` objects; SSE framing is `http/sse.ts`'s.
 *
 * Order and indexes: blocks get increasing `index`es from 0; a block is closed (`content_block_stop`) when a part
 * of another kind arrives. A `tool_use` block owns the stream from its `tool-call-start` until its
 * `tool-call-end`: parts of anything else that arrive meanwhile (a second tool call interleaved by an
 * OpenAI-style upstream, say) wait in a queue and are emitted, in order, once the tool call ends. So every
 * argument fragment lands in its own block, exactly as produced, and blocks never interleave.
 *
 * Reasoning: `reasoning-delta`s fill a `thinking` block; `reasoning-end` adds its `signature_delta` and closes
 * it; a `reasoning-end` with `redactedData` is a `redacted_thinking` block.
 *
 * The first part is read before `message_start` is produced, so an upstream that fails before answering makes
 * the iterator throw before any event (the route can still answer with a plain HTTP error). Errors are never
 * caught here; the route turns them into an `error` event.
 *
 * Usage: `message_start` carries what is known before generation (`meta.inputTokens`, else 0; output 0; cache
 * counters null; the input count may be a promise, awaited when `message_start` is produced, so a route can count
 * while the upstream call starts); `message_delta` carries the final numbers from the `finish` part. The returned iterator's
 * `summary()` gives the route those final numbers (and whether the stream finished) for usage recording.
 *
 * Keep-alive: when no event was produced for `pingIntervalMs` (default 10 s) while waiting for the next part,
 * a `ping` event is produced, as Anthropic does.
 */
import { ApiError } from '../../core/api-error.js';
import type { ChatStreamPart, FinishReason, Usage } from '../../core/chat.js';
import { toAnthropicStopReason } from './map-stop-reason.js';
import { toAnthropicUsage } from './map-usage.js';
import type { AnthropicContentBlock, AnthropicContentBlockDelta, AnthropicStreamEvent } from './wire-types.js';

export interface MessagesStreamMeta {
  /** The message id (`msg_…`). */
  id: string;
  /** The model name the caller asked for, echoed back. */
  model: string;
  /** Input tokens known before generation (canonical: cache reads and writes included), or their count underway. */
  inputTokens?: number | Promise<number>;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
}

export interface MessagesStreamOptions {
  /** Produce a `ping` after this long without an event; default 10 000 ms. */
  pingIntervalMs?: number;
}

export interface MessagesStreamSummary {
  /** True once the `finish` part was encoded (`message_stop` produced). */
  finished: boolean;
  finishReason?: FinishReason;
  stopSequence?: string;
  /** The final usage from the `finish` part; absent until then. */
  usage?: Usage;
}

export type MessagesStreamEncoding = AsyncGenerator<AnthropicStreamEvent, void, undefined> & {
  summary(): MessagesStreamSummary;
};

export const DEFAULT_PING_INTERVAL_MS = 10_000;

type OpenBlock = { kind: 'text' | 'thinking'; index: number } | { kind: 'tool'; index: number; toolIndex: number };

/** The block state machine; `handle` appends to `events`, the generator drains them. */
class BlockEncoder {
  readonly events: AnthropicStreamEvent[] = [];
  private nextIndex = 0;
  private open: OpenBlock | null = null;
  /** The canonical index of the tool call whose block owns the stream, if any. */
  private activeTool: number | null = null;
  private queue: ChatStreamPart[] = [];
  finish: Extract<ChatStreamPart, { type: 'finish' }> | null = null;

  handle(part: ChatStreamPart): void {
    if (this.activeTool !== null && part.type !== 'finish' && !this.belongsToActiveTool(part)) {
      this.queue.push(part);
      return;
    }
    switch (part.type) {
      case 'text-delta':
        if (part.text !== '') {
          this.ensureOpen('text');
          this.delta({ type: 'text_delta', text: part.text });
        }
        break;
      case 'reasoning-delta':
        if (part.text !== '') {
          this.ensureOpen('thinking');
          this.delta({ type: 'thinking_delta', thinking: part.text });
        }
        break;
      case 'reasoning-end':
        if (part.redactedData !== undefined) {
          this.close();
          this.start({ type: 'redacted_thinking', data: part.redactedData });
          this.close();
        } else {
          const signature = part.signature ?? '';
          if (this.open?.kind !== 'thinking' && signature === '') {
            // Nothing was thought and nothing can be replayed: no block.
            break;
          }
          this.ensureOpen('thinking');
          if (signature !== '') {
            this.delta({ type: 'signature_delta', signature });
          }
          this.close();
        }
        break;
      case 'tool-call-start':
        this.close();
        this.start({ type: 'tool_use', id: part.id, name: part.name, input: {} }, part.index);
        this.activeTool = part.index;
        break;
      case 'tool-call-delta':
        // A fragment for a call whose block is not open (one that already ended) breaks the canonical
        // contract; there is no block left to put it in.
        if (this.open?.kind === 'tool' && this.open.toolIndex === part.index && part.argumentsDelta !== '') {
          this.delta({ type: 'input_json_delta', partial_json: part.argumentsDelta });
        }
        break;
      case 'tool-call-end':
        if (this.activeTool === part.index) {
          this.close();
          this.activeTool = null;
          const waiting = this.queue;
          this.queue = [];
          for (const queued of waiting) {
            this.handle(queued);
          }
        }
        break;
      case 'finish':
        this.flushQueue();
        this.close();
        this.finish = part;
        break;
    }
  }

  private belongsToActiveTool(part: ChatStreamPart): boolean {
    return (part.type === 'tool-call-delta' || part.type === 'tool-call-end') && part.index === this.activeTool;
  }

  /** At `finish`, a tool call that never ended is closed and everything that waited behind it is emitted. */
  private flushQueue(): void {
    while (this.activeTool !== null || this.queue.length > 0) {
      if (this.activeTool !== null) {
        this.close();
        this.activeTool = null;
      }
      const waiting = this.queue;
      this.queue = [];
      for (const queued of waiting) {
        this.handle(queued);
      }
    }
  }

  private ensureOpen(kind: 'text' | 'thinking'): void {
    if (this.open?.kind !== kind) {
      this.close();
      this.start(
        kind === 'text'
          ? { type: 'text', text: '', citations: null }
          : { type: 'thinking', thinking: '', signature: '' },
      );
    }
  }

  private start(block: AnthropicContentBlock, toolIndex?: number): void {
    const index = this.nextIndex++;
    this.events.push({
      event: 'content_block_start',
      data: { type: 'content_block_start', index, content_block: block },
    });
    if (block.type === 'redacted_thinking') {
      this.open = { kind: 'thinking', index };
    } else if (toolIndex !== undefined) {
      this.open = { kind: 'tool', index, toolIndex };
    } else {
      this.open = { kind: block.type === 'text' ? 'text' : 'thinking', index };
    }
  }

  private delta(delta: AnthropicContentBlockDelta): void {
    if (this.open) {
      this.events.push({
        event: 'content_block_delta',
        data: { type: 'content_block_delta', index: this.open.index, delta },
      });
    }
  }

  private close(): void {
    if (this.open) {
      this.events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index: this.open.index } });
      this.open = null;
    }
  }
}

const PING = Symbol('ping');

export function encodeMessagesStream(
  parts: AsyncIterable<ChatStreamPart>,
  meta: MessagesStreamMeta,
  options: MessagesStreamOptions = {},
): MessagesStreamEncoding {
  const pingIntervalMs = options.pingIntervalMs ?? DEFAULT_PING_INTERVAL_MS;
  const summary: MessagesStreamSummary = { finished: false };

  async function* encode(): AsyncGenerator<AnthropicStreamEvent, void, undefined> {
    const iterator = parts[Symbol.asyncIterator]();
    let pending: Promise<IteratorResult<ChatStreamPart>> | null = null;
    let exhausted = false;
    try {
      let result = await iterator.next();
      const startUsage = toAnthropicUsage({
        inputTokens: (await meta.inputTokens) ?? 0,
        outputTokens: 0,
        cacheReadTokens: meta.cacheReadTokens,
        cacheWriteTokens: meta.cacheWriteTokens,
      });
      yield {
        event: 'message_start',
        data: {
          type: 'message_start',
          message: {
            id: meta.id,
            type: 'message',
            role: 'assistant',
            model: meta.model,
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: startUsage,
          },
        },
      };
      const blocks = new BlockEncoder();
      while (!result.done) {
        blocks.handle(result.value);
        while (blocks.events.length > 0) {
          yield blocks.events.shift()!;
        }
        const finish = blocks.finish;
        if (finish) {
          const stopSequence = finish.finishReason === 'stop' ? finish.stopSequence : undefined;
          const usage = toAnthropicUsage(finish.usage);
          Object.assign(summary, {
            finished: true,
            finishReason: finish.finishReason,
            stopSequence,
            usage: finish.usage,
          });
          yield {
            event: 'message_delta',
            data: {
              type: 'message_delta',
              delta: {
                stop_reason: toAnthropicStopReason(finish.finishReason, stopSequence),
                stop_sequence: stopSequence ?? null,
              },
              usage: {
                output_tokens: usage.output_tokens,
                input_tokens: usage.input_tokens,
                cache_creation_input_tokens: usage.cache_creation_input_tokens,
                cache_read_input_tokens: usage.cache_read_input_tokens,
              },
            },
          };
          yield { event: 'message_stop', data: { type: 'message_stop' } };
          return;
        }
        pending = iterator.next();
        for (;;) {
          let timer: NodeJS.Timeout | undefined;
          const ping = new Promise<typeof PING>((resolve) => {
            timer = setTimeout(() => resolve(PING), pingIntervalMs);
          });
          let winner: IteratorResult<ChatStreamPart> | typeof PING;
          try {
            winner = await Promise.race([pending, ping]);
          } finally {
            clearTimeout(timer);
          }
          if (winner === PING) {
            yield { event: 'ping', data: { type: 'ping' } };
            continue;
          }
          result = winner;
          pending = null;
          break;
        }
      }
      exhausted = true;
      throw new ApiError(502, 'The model stream ended without a finish', {
        type: 'upstream_error',
        code: 'incomplete_stream',
      });
    } finally {
      if (!exhausted) {
        // Let the source release what it holds (the upstream response). When the consumer left while a part
        // was being awaited, do not wait for it, but never leave its rejection unhandled; the route's abort
        // signal stops the provider.
        pending?.catch(() => undefined);
        const closing = Promise.resolve(iterator.return?.()).catch(() => undefined);
        if (!pending) {
          await closing;
        }
      }
    }
  }

  return Object.assign(encode(), { summary: () => ({ ...summary }) });
}
