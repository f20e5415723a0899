/**
 * The OpenAI Responses codec (`POST /v1/responses` on any provider): decode a request into canonical call
 * options, encode a canonical result or stream back into Responses wire objects and events.
 */
export { decodeResponsesRequest, type DecodedResponsesRequest, type ResponsesDecodeContext } from './decode-request.js';
export { encodeResponse } from './encode-response.js';
export {
  encodeResponsesStream,
  type ResponsesStream,
  type ResponsesStreamResult,
  type ResponsesStreamState,
} from './encode-stream.js';
export { encodePassthroughStreamFailure, encodeStreamFailure } from './encode-stream-failure.js';
export { conversationAfterTurn } from './conversation.js';
export type { ResponseEcho, ResponseMeta } from './response-object.js';
export type * from './wire-types.js';
