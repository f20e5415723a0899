/**
 * The one reader of upstream server-sent events: bytes → `{event, data}` with eventsource-parser (byte
 * boundaries, CRLF, multi-line data, comments such as OpenRouter's `: OPENROUTER PROCESSING` keep-alives are the
 * parser's business). Both provider families and native passthrough read their upstream's events through it.
 *
 * `endAt` names the data that ends a stream (`[DONE]` for OpenAI's dialects): the reader stops there, so the
 * caller can finish even if the upstream is slow to close the response, and drains what is left of the body in
 * the background, so the connection can go back to the pool instead of being cut (a body that never ends is
 * still cut by the body timeout). Without it, events are read until the body ends; a last event without its
 * blank line is still dispatched.
 */
import { createParser } from 'eventsource-parser';
import { UpstreamError } from '../../core/api-error.js';

export interface UpstreamSseEvent {
  /** The `event:` name, when the upstream sent one. */
  event?: string;
  /** The `data:` lines joined, as sent. */
  data: string;
}

async function drainInBackground(iterator: AsyncIterator<Uint8Array>): Promise<void> {
  try {
    while (!(await iterator.next()).done) {
      // Discard: the events after the end mean nothing.
    }
  } catch {
    // The answer is complete; a failure while draining only costs the connection.
  }
}

/** Bytes in, whole events out, synchronously: the decoding `readEvents` and native passthrough share. */
export interface SseDecoder {
  /** The events these bytes complete (usually one; none while an event is still arriving). */
  push(bytes: Uint8Array): UpstreamSseEvent[];
  /** The events left when the body ended: a last event without its blank line is still dispatched. */
  end(): UpstreamSseEvent[];
}

/**
 * Native passthrough calls this per chunk instead of iterating an async generator of events: each yield of a
 * generator costs a promise and a resumption (~0.35 µs an event of the relay's ~2, bench/README.md).
 */
export function sseDecoder(): SseDecoder {
  const decoder = new TextDecoder();
  let events: UpstreamSseEvent[] = [];
  const parser = createParser({
    onEvent: ({ event, data }) => events.push(event === undefined ? { data } : { event, data }),
  });
  const take = (): UpstreamSseEvent[] => {
    const done = events;
    events = [];
    return done;
  };
  return {
    push(bytes) {
      parser.feed(decoder.decode(bytes, { stream: true }));
      return take();
    },
    end() {
      parser.feed(`${decoder.decode()}\n\n`);
      return take();
    },
  };
}

/**
 * Events of `body` turned into `T` by `convert` (undefined: skipped), up to `endAt`, in one generator layer:
 * readers that reshape events pass their shaping here rather than wrapping a reader in another generator.
 */
export async function* readEvents<T>(
  body: AsyncIterable<Uint8Array>,
  endAt: string | undefined,
  convert: (event: UpstreamSseEvent) => T | undefined,
): AsyncGenerator<T> {
  const decoder = sseDecoder();
  const iterator = body[Symbol.asyncIterator]();
  let handedOff = false;
  try {
    for (let next = await iterator.next(); ; next = await iterator.next()) {
      const events = next.done ? decoder.end() : decoder.push(next.value);
      for (const event of events) {
        if (endAt !== undefined && event.data.trim() === endAt) {
          if (!next.done) {
            handedOff = true;
            void drainInBackground(iterator);
          }
          return;
        }
        const converted = convert(event);
        if (converted !== undefined) {
          yield converted;
        }
      }
      if (next.done) {
        return;
      }
    }
  } finally {
    if (!handedOff) {
      // Our consumer stopped early or something failed: release (and so close) the upstream body.
      await iterator.return?.();
    }
  }
}

/**
 * An event's data parsed as JSON; undefined for an event without data. Data that is not JSON is the upstream's
 * failure: a 502 naming `provider`.
 */
export function parseEventData(data: string, provider: string): unknown {
  const text = data.trim();
  if (text.length === 0) {
    return undefined;
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UpstreamError(provider, 502, null, `Upstream ${provider} sent an event that is not JSON`, {
      cause: error,
    });
  }
}

/** The events of a provider's stream with their data parsed as JSON (events without data are skipped). */
export function readSseJsonEvents(
  body: AsyncIterable<Uint8Array>,
  provider: string,
): AsyncGenerator<{ event?: string; data: unknown }> {
  return readEvents(body, undefined, ({ event, data }) => {
    const parsed = parseEventData(data, provider);
    return parsed === undefined ? undefined : { event, data: parsed };
  });
}
