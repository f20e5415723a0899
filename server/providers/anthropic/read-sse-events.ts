/**
 * Anthropic SSE bytes → `{event, data}` with `data` JSON-parsed, using eventsource-parser (byte boundaries,
 * CRLF, multi-line data and comments are the parser's business). Anthropic names every event (`event:
 * message_start` …) and repeats the name as `data.type`; both are kept for the decoder.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { UpstreamError } from '../../core/api-error.js';
import type { AnthropicUpstreamStreamEvent } from '../../formats/anthropic-messages/wire-types.js';

export async function* readSseEvents(body: AsyncIterable<Uint8Array>, provider: string): AsyncGenerator<AnthropicUpstreamStreamEvent> {
  const decoder = new TextDecoder();
  const pending: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => pending.push(event) });

  function* drain(): Generator<AnthropicUpstreamStreamEvent> {
    while (pending.length > 0) {
      const event = pending.shift() as EventSourceMessage;
      const data = event.data.trim();
      if (data.length === 0) {
        continue;
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(data);
      } catch (error) {
        throw new UpstreamError(provider, 502, null, `Upstream ${provider} sent an event that is not JSON`, { cause: error });
      }
      yield { event: event.event, data: parsed };
    }
  }

  for await (const piece of body) {
    parser.feed(decoder.decode(piece, { stream: true }));
    yield* drain();
  }
  // A server that omits the blank line after its last event still gets that event dispatched.
  parser.feed(`${decoder.decode()}\n\n`);
  yield* drain();
}
