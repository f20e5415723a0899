/**
 * Upstream SSE bytes → the JSON object of each `data:` event, parsed with eventsource-parser (comments such
 * as OpenRouter's `: OPENROUTER PROCESSING` keep-alives and multi-line data are the parser's business).
 *
 * `[DONE]` ends the events at once, so the caller can finish even if the upstream is slow to close the
 * response; what is left of the body is drained in the background, so the connection can go back to the
 * pool instead of being cut (a body that never ends is still cut by the body timeout).
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { UpstreamError } from '../../core/api-error.js';

async function drainInBackground(iterator: AsyncIterator<Uint8Array>): Promise<void> {
  try {
    while (!(await iterator.next()).done) {
      // Discard: the events after [DONE] mean nothing.
    }
  } catch {
    // The answer is complete; a failure while draining only costs the connection.
  }
}

export async function* readSseJson(body: AsyncIterable<Uint8Array>, provider: string): AsyncGenerator<unknown> {
  const decoder = new TextDecoder();
  const pending: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => pending.push(event) });
  let done = false;

  function* drain(): Generator<unknown> {
    while (pending.length > 0 && !done) {
      const event = pending.shift() as EventSourceMessage;
      const data = event.data.trim();
      if (data === '[DONE]') {
        done = true;
        return;
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

  const iterator = body[Symbol.asyncIterator]();
  let handedOff = false;
  try {
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      parser.feed(decoder.decode(next.value, { stream: true }));
      yield* drain();
      if (done) {
        handedOff = true;
        void drainInBackground(iterator);
        return;
      }
    }
    // A server that omits the blank line after its last event still gets that event dispatched.
    parser.feed(`${decoder.decode()}\n\n`);
    yield* drain();
  } finally {
    if (!handedOff) {
      // Our consumer stopped early or something failed: release (and so close) the upstream body.
      await iterator.return?.();
    }
  }
}
