/**
 * Wire types for client users, taken from the generated contract (`generated/api.d.ts`, produced from
 * `openapi/api.yaml`). Nothing here is written by hand: every alias points at `components['schemas']`.
 */
import type { components } from '../generated/api.js';

export type { components, operations, paths } from '../generated/api.js';

type Schemas = components['schemas'];

/** Any schema of the contract by name, for types this file does not alias: `Schema<'ChatToolCall'>`. */
export type Schema<Name extends keyof Schemas> = Schemas[Name];

export type ModelList = Schemas['ModelList'];
export type ModelObject = Schemas['ModelObject'];

export type ChatCompletionRequest = Schemas['ChatCompletionRequest'];
export type ChatMessage = Schemas['ChatMessage'];
export type ChatCompletion = Schemas['ChatCompletion'];
export type ChatCompletionChunk = Schemas['ChatCompletionChunk'];
export type ChatCompletionStreamError = Schemas['ChatCompletionStreamError'];

export type ResponseCreateRequest = Schemas['ResponseCreateRequest'];
export type ResponseObject = Schemas['ResponseObject'];
export type ResponseStreamEvent = Schemas['ResponseStreamEvent'];
export type ResponseErrorEvent = Schemas['ResponseErrorEvent'];

export type AnthropicMessageCreateRequest = Schemas['AnthropicMessageCreateRequest'];
export type AnthropicCountTokensRequest = Schemas['AnthropicCountTokensRequest'];
export type AnthropicMessage = Schemas['AnthropicMessage'];
export type AnthropicTokenCount = Schemas['AnthropicTokenCount'];
export type AnthropicStreamEvent = Schemas['AnthropicStreamEvent'];
export type AnthropicErrorEvent = Schemas['AnthropicErrorEvent'];

export type WebSearchRequest = Schemas['WebSearchRequest'];
export type WebSearchResponse = Schemas['WebSearchResponse'];
export type SearchAnswerRequest = Schemas['SearchAnswerRequest'];
export type SearchAnswer = Schemas['SearchAnswer'];
export type SearchAnswerStreamEvent = Schemas['SearchAnswerStreamEvent'];
export type SearchAnswerErrorEvent = Schemas['SearchAnswerErrorEvent'];

export type ImageGenerationRequest = Schemas['ImageGenerationRequest'];
export type ImagesResponse = Schemas['ImagesResponse'];
export type VideoCreateRequest = Schemas['VideoCreateRequest'];
export type Video = Schemas['Video'];
export type VideoList = Schemas['VideoList'];
export type SpeechRequest = Schemas['SpeechRequest'];
export type MusicGenerationRequest = Schemas['MusicGenerationRequest'];
export type MusicGenerationResponse = Schemas['MusicGenerationResponse'];

export type EmbeddingRequest = Schemas['EmbeddingRequest'];
export type EmbeddingList = Schemas['EmbeddingList'];
export type RerankRequest = Schemas['RerankRequest'];
export type RerankResponse = Schemas['RerankResponse'];

export type FileObject = Schemas['FileObject'];
export type FileList = Schemas['FileList'];
export type FileDeleted = Schemas['FileDeleted'];

export type WebSearchToolRequest = Schemas['WebSearchToolRequest'];
export type WebSearchToolResponse = Schemas['WebSearchToolResponse'];
export type TranscribeAudioToolRequest = Schemas['TranscribeAudioToolRequest'];
export type TranscribeAudioToolResponse = Schemas['TranscribeAudioToolResponse'];
export type ImageUnderstandingRequest = Schemas['ImageUnderstandingRequest'];
export type ImageUnderstandingResponse = Schemas['ImageUnderstandingResponse'];

export type ErrorResponse = Schemas['ErrorResponse'];
export type ErrorObject = Schemas['ErrorObject'];
export type AnthropicErrorResponse = Schemas['AnthropicErrorResponse'];
export type JsonRpcErrorResponse = Schemas['JsonRpcErrorResponse'];
