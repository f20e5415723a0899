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
import { createParser, type EventSourceMessage } from 'eventsource-parser';
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

export async function* readSse(body: AsyncIterable<Uint8Array>, options: { endAt?: string } = {}): AsyncGenerator<UpstreamSseEvent> {
  const decoder = new TextDecoder();
  const pending: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => pending.push(event) });
  let ended = false;

  function* dispatch(): Generator<UpstreamSseEvent> {
    while (pending.length > 0 && !ended) {
      const { event, data } = pending.shift() as EventSourceMessage;
      if (options.endAt !== undefined && data.trim() === options.endAt) {
        ended = true;
        return;
      }
      yield event === undefined ? { data } : { event, data };
    }
  }

  const iterator = body[Symbol.asyncIterator]();
  let handedOff = false;
  try {
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      parser.feed(decoder.decode(next.value, { stream: true }));
      yield* dispatch();
      if (ended) {
        handedOff = true;
        void drainInBackground(iterator);
        return;
      }
    }
    parser.feed(`${decoder.decode()}\n\n`);
    yield* dispatch();
  } finally {
    if (!handedOff) {
      // Our consumer stopped early or something failed: release (and so close) the upstream body.
      await iterator.return?.();
    }
  }
}

/**
 * The events of a provider's stream with their data parsed as JSON (events without data are skipped). Data
 * that is not JSON is the upstream's failure: a 502 naming `provider`.
 */
export async function* readSseJsonEvents(
  body: AsyncIterable<Uint8Array>,
  provider: string,
  options: { endAt?: string } = {},
): AsyncGenerator<{ event?: string; data: unknown }> {
  for await (const { event, data } of readSse(body, options)) {
    const text = data.trim();
    if (text.length === 0) {
      continue;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new UpstreamError(provider, 502, null, `Upstream ${provider} sent an event that is not JSON`, { cause: error });
    }
    yield { event, data: parsed };
  }
}
