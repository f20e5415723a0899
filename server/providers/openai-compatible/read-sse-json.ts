/**
 * Upstream SSE bytes → the JSON object of each `data:` event, parsed with eventsource-parser (comments such
 * as OpenRouter's `: OPENROUTER PROCESSING` keep-alives and multi-line data are the parser's business).
 * `[DONE]` ends the events; the body is still read to its end so the connection can go back to the pool.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { UpstreamError } from '../../http/api-error.js';

export async function* readSseJson(body: AsyncIterable<Uint8Array>, provider: string): AsyncGenerator<unknown> {
  const decoder = new TextDecoder();
  const pending: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => pending.push(event) });
  let done = false;

  function* drain(): Generator<unknown> {
    while (pending.length > 0) {
      const event = pending.shift() as EventSourceMessage;
      if (done) {
        continue;
      }
      const data = event.data.trim();
      if (data === '[DONE]') {
        done = true;
        continue;
      }
      if (data.length === 0) {
        continue;
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(data);
      } catch (error) {
        throw new UpstreamError(provider, 502, null, `Upstream ${provider} sent an event that is not JSON`, { cause: error });
      }
      // `event: error` frames carry the error as plain data on some servers.
      if (event.event === 'error' && parsed && typeof parsed === 'object' && !('error' in parsed)) {
        yield { error: parsed };
      } else {
        yield parsed;
      }
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
