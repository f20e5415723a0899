/**
 * An OpenAI-compatible upstream's stream → the JSON object of each `data:` event, through the one upstream SSE
 * reader; `[DONE]` ends it. Data that is not JSON is the upstream's failure (502).
 */
import { readSseJsonEvents } from '../upstream/read-sse.js';

export async function* readSseJson(body: AsyncIterable<Uint8Array>, provider: string): AsyncGenerator<unknown> {
  for await (const { event, data } of readSseJsonEvents(body, provider, { endAt: '[DONE]' })) {
    // `event: error` frames carry the error as plain data on some servers.
    yield event === 'error' && data && typeof data === 'object' && !('error' in data) ? { error: data } : data;
  }
}
