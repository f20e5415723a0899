/**
 * An Anthropic upstream's stream → `{event, data}` with `data` JSON-parsed, through the one upstream SSE reader.
 * Anthropic names every event (`event: message_start` …) and repeats the name as `data.type`; both are kept
 * for the decoder. Data that is not JSON is the upstream's failure (502).
 */
import { UpstreamError } from '../../core/api-error.js';
import type { AnthropicUpstreamStreamEvent } from '../../formats/anthropic-messages/wire-types.js';
import { readSse } from '../upstream/read-sse.js';

export async function* readSseEvents(body: AsyncIterable<Uint8Array>, provider: string): AsyncGenerator<AnthropicUpstreamStreamEvent> {
  for await (const { event, data } of readSse(body)) {
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
    yield { event, data: parsed } as AnthropicUpstreamStreamEvent;
  }
}
