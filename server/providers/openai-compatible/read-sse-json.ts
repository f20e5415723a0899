/**
 * An OpenAI-compatible upstream's stream → the JSON object of each `data:` event, through the one upstream SSE
 * reader; `[DONE]` ends it. Data that is not JSON is the upstream's failure (502).
 */
import { parseEventData, readEvents } from '../upstream/read-sse.js';

export function readSseJson(body: AsyncIterable<Uint8Array>, provider: string): AsyncGenerator<unknown> {
  return readEvents(body, '[DONE]', ({ event, data }) => {
    const parsed = parseEventData(data, provider);
    // `event: error` frames carry the error as plain data on some servers.
    return event === 'error' && parsed && typeof parsed === 'object' && !('error' in parsed)
      ? { error: parsed }
      : parsed;
  });
}
