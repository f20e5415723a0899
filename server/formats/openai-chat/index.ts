/**
 * The OpenAI chat-completions codec: our API's requests and answers (decode-request, encode-response,
 * encode-stream) and the reverse direction for OpenAI-compatible upstreams (encode-request,
 * decode-response, decode-stream).
 */
export { decodeChatRequest, type DecodedChatRequest } from './decode-request.js';
export { encodeChatCompletion, type ChatCompletionMeta } from './encode-response.js';
export {
  encodeChatStream,
  type ChatStreamEncoding,
  type ChatStreamMeta,
  type ChatStreamSummary,
} from './encode-stream.js';
export { encodeChatStreamFailure } from './encode-stream-failure.js';
export { encodeChatRequest, type ChatRequestDialect, type EncodeChatRequestOptions } from './encode-request.js';
export { decodeChatCompletion } from './decode-response.js';
export { decodeChatStream } from './decode-stream.js';
export type { UpstreamDecodeContext } from './upstream-decode-context.js';
