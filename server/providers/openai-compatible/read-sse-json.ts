/**
 * An OpenAI-compatible upstream's stream → the JSON object of each `data:` event, through the one upstream SSE
 * reader; `[DONE]` ends it. Data that is not JSON is the upstream's failure (502).
 */
import { UpstreamError } from '../../core/api-error.js';
import { readSse } from '../upstream/read-sse.js';

export async function* readSseJson(body: AsyncIterable<Uint8Array>, provider: string): AsyncGenerator<unknown> {
  for await (const { event, data } of readSse(body, { endAt: '[DONE]' })) {
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
    // `event: error` frames carry the error as plain data on some servers.
    yield event === 'error' && parsed && typeof parsed === 'object' && !('error' in parsed) ? { error: parsed } : parsed;
  }
}
