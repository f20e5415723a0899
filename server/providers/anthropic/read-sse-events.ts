/**
 * An Anthropic upstream's stream → `{event, data}` with `data` JSON-parsed, through the one upstream SSE reader.
 * Anthropic names every event (`event: message_start` …) and repeats the name as `data.type`; both are kept
 * for the decoder. Data that is not JSON is the upstream's failure (502).
 */
import type { AnthropicUpstreamStreamEvent } from '../../formats/anthropic-messages/wire-types.js';
import { readSseJsonEvents } from '../upstream/read-sse.js';

export function readSseEvents(
  body: AsyncIterable<Uint8Array>,
  provider: string,
): AsyncGenerator<AnthropicUpstreamStreamEvent> {
  return readSseJsonEvents(body, provider) as AsyncGenerator<AnthropicUpstreamStreamEvent>;
}
