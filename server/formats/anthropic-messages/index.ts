/**
 * The Anthropic Messages codec: our `/anthropic/v1/messages` dialect in both directions (decode a caller's
 * request, encode our answer and stream) and the reverse direction for the Anthropic upstream provider (encode
 * its request, decode its answer and stream). Pure functions; SSE framing and HTTP are not here.
 */
export { decodeMessagesRequest, type DecodedMessagesRequest } from './decode-request.js';
export { encodeMessage, type MessageMeta } from './encode-response.js';
export {
  DEFAULT_PING_INTERVAL_MS,
  encodeMessagesStream,
  type MessagesStreamEncoding,
  type MessagesStreamMeta,
  type MessagesStreamOptions,
  type MessagesStreamSummary,
} from './encode-stream.js';
export {
  DEFAULT_MAX_TOKENS,
  EFFORT_BUDGET_TOKENS,
  encodeCountTokensRequest,
  encodeMessagesRequest,
  type EncodeMessagesRequestOptions,
} from './encode-request.js';
export { decodeMessage } from './decode-response.js';
export { encodeMessagesStreamFailure } from './encode-stream-failure.js';
export { decodeMessagesStream, streamErrorFromEvent, type DecodeMessagesStreamOptions } from './decode-stream.js';
export { fromAnthropicStopReason, toAnthropicStopReason } from './map-stop-reason.js';
export { fromAnthropicUsage, toAnthropicUsage } from './map-usage.js';
export type * from './wire-types.js';
