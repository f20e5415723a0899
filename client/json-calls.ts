/**
 * Non-streaming calls of the text APIs: the typed JSON body of the 2xx answer, or a thrown `OmnigateError`.
 * The raw client returns `{data, error}` instead; these exist so callers need not check both.
 *
 * The `as` casts undo openapi-fetch's `Readable<…>` wrapper, which drops properties typed exactly `null`
 * (`NonNullable<null>` is `never`, and `never` matches its write-only marker), e.g. `choices[].logprobs`.
 */
import type { CallOptions, RawClient } from './raw-client.js';
import type {
  AnthropicCountTokensRequest,
  AnthropicMessage,
  AnthropicMessageCreateRequest,
  AnthropicTokenCount,
  ChatCompletion,
  ChatCompletionRequest,
  ResponseCreateRequest,
  ResponseObject,
  ImageUnderstandingRequest,
  ImageUnderstandingResponse,
  SearchAnswer,
  SearchAnswerRequest,
  TranscribeAudioToolRequest,
  TranscribeAudioToolResponse,
  WebSearchToolRequest,
  WebSearchToolResponse,
  WebSearchRequest,
  WebSearchResponse,
} from './types.js';
import { unwrap } from './unwrap.js';

/** A request body without `stream: true` (use the `stream*` helpers for that). */
export type NonStreamRequest<Body> = Omit<Body, 'stream'> & { stream?: false | null };

export async function createChatCompletion(
  raw: RawClient,
  body: NonStreamRequest<ChatCompletionRequest>,
  options: CallOptions = {},
): Promise<ChatCompletion> {
  return unwrap(await raw.POST('/v1/chat/completions', { body, signal: options.signal })) as ChatCompletion;
}

export async function createResponse(
  raw: RawClient,
  body: NonStreamRequest<ResponseCreateRequest>,
  options: CallOptions = {},
): Promise<ResponseObject> {
  return unwrap(await raw.POST('/v1/responses', { body, signal: options.signal })) as ResponseObject;
}

export async function createMessage(
  raw: RawClient,
  body: Omit<AnthropicMessageCreateRequest, 'stream'> & { stream?: false },
  options: CallOptions = {},
): Promise<AnthropicMessage> {
  return unwrap(await raw.POST('/anthropic/v1/messages', { body, signal: options.signal })) as AnthropicMessage;
}

export async function countMessageTokens(
  raw: RawClient,
  body: AnthropicCountTokensRequest,
  options: CallOptions = {},
): Promise<AnthropicTokenCount> {
  return unwrap(
    await raw.POST('/anthropic/v1/messages/count_tokens', { body, signal: options.signal }),
  ) as AnthropicTokenCount;
}

export async function webSearch(
  raw: RawClient,
  body: WebSearchRequest,
  options: CallOptions = {},
): Promise<WebSearchResponse> {
  return unwrap(await raw.POST('/v1/web/search', { body, signal: options.signal })) as WebSearchResponse;
}

export async function createSearchAnswer(
  raw: RawClient,
  body: Omit<SearchAnswerRequest, 'stream'> & { stream?: false },
  options: CallOptions = {},
): Promise<SearchAnswer> {
  return unwrap(await raw.POST('/v1/search/answer', { body, signal: options.signal })) as SearchAnswer;
}

/** The `image_understanding` tool over REST (the same tool MCP clients call). */
export async function understandImage(
  raw: RawClient,
  body: ImageUnderstandingRequest,
  options: CallOptions = {},
): Promise<ImageUnderstandingResponse> {
  return unwrap(
    await raw.POST('/v1/tools/image_understanding', { body, signal: options.signal }),
  ) as ImageUnderstandingResponse;
}

/** The `web_search` tool over REST: results plus the text an agent would be given. */
export async function webSearchTool(
  raw: RawClient,
  body: WebSearchToolRequest,
  options: CallOptions = {},
): Promise<WebSearchToolResponse> {
  return unwrap(await raw.POST('/v1/tools/web_search', { body, signal: options.signal })) as WebSearchToolResponse;
}

/** The `transcribe_audio` tool over REST: an uploaded file (`file_id`) or base64 audio, transcribed or translated. */
export async function transcribeAudioTool(
  raw: RawClient,
  body: TranscribeAudioToolRequest,
  options: CallOptions = {},
): Promise<TranscribeAudioToolResponse> {
  return unwrap(
    await raw.POST('/v1/tools/transcribe_audio', { body, signal: options.signal }),
  ) as TranscribeAudioToolResponse;
}
