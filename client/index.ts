/**
 * The typed Omnigate client: openapi-fetch over the contract's `paths`, with the API key sent as a bearer
 * token on every call, plus helpers for what raw openapi-fetch makes awkward (streams, bytes, multipart,
 * polling, throwing on errors). Every operation stays reachable through `raw` / `GET` / `POST` / `DELETE`.
 *
 * ```ts
 * const omnigate = createClient({ baseUrl: 'http://127.0.0.1:8080', apiKey });
 * const { data } = await omnigate.GET('/v1/models');
 * for await (const chunk of omnigate.streamChatCompletion({ model: 'fast', messages })) { … }
 * ```
 */
import createFetchClient from 'openapi-fetch';
import { bearerAuth } from './bearer-auth.js';
import type { paths } from '../generated/api.js';
import {
  createMusic,
  createSpeech,
  downloadFile,
  downloadMedia,
  downloadVideoContent,
  generateImages,
} from './binary.js';
import { createEmbeddings, rerank } from './embeddings.js';
import {
  countMessageTokens,
  createChatCompletion,
  createMessage,
  createResponse,
  createSearchAnswer,
  understandImage,
  webSearch,
  webSearchTool,
  transcribeAudioTool,
} from './json-calls.js';
import type { CallOptions, RawClient } from './raw-client.js';
import { streamChatCompletion, streamMessage, streamResponse, streamSearchAnswer } from './streams.js';
import { transcribeAudio, translateAudio } from './transcribe-audio.js';
import { uploadFile } from './upload-file.js';
import { waitForVideo } from './wait-for-video.js';

export interface ClientOptions {
  /** The server root, e.g. `http://127.0.0.1:8080` (spec paths already start with `/v1` or `/anthropic`). */
  baseUrl: string;
  apiKey: string;
  /** A fetch to use instead of `globalThis.fetch` (tests, proxies, retries). */
  fetch?: (request: Request) => Promise<Response>;
  /** Extra headers sent on every call. */
  headers?: Record<string, string>;
}

/** Drops the leading `raw` parameter of a helper. */
type Bound<Helper> = Helper extends (raw: RawClient, ...rest: infer Rest) => infer Result
  ? (...rest: Rest) => Result
  : never;

export interface OmnigateClient {
  /** The underlying openapi-fetch client; every operation, typed from `openapi/api.yaml`. */
  raw: RawClient;
  GET: RawClient['GET'];
  POST: RawClient['POST'];
  DELETE: RawClient['DELETE'];
  createChatCompletion: Bound<typeof createChatCompletion>;
  createResponse: Bound<typeof createResponse>;
  createMessage: Bound<typeof createMessage>;
  countMessageTokens: Bound<typeof countMessageTokens>;
  webSearch: Bound<typeof webSearch>;
  createSearchAnswer: Bound<typeof createSearchAnswer>;
  understandImage: Bound<typeof understandImage>;
  webSearchTool: Bound<typeof webSearchTool>;
  transcribeAudioTool: Bound<typeof transcribeAudioTool>;
  streamChatCompletion: Bound<typeof streamChatCompletion>;
  streamResponse: Bound<typeof streamResponse>;
  streamMessage: Bound<typeof streamMessage>;
  streamSearchAnswer: Bound<typeof streamSearchAnswer>;
  generateImages: Bound<typeof generateImages>;
  /** The bytes behind a signed media link; sends no key (the link is its own credential). */
  downloadMedia: (url: string, options?: CallOptions) => ReturnType<typeof downloadMedia>;
  createSpeech: Bound<typeof createSpeech>;
  createMusic: Bound<typeof createMusic>;
  downloadFile: Bound<typeof downloadFile>;
  downloadVideoContent: Bound<typeof downloadVideoContent>;
  uploadFile: Bound<typeof uploadFile>;
  transcribeAudio: Bound<typeof transcribeAudio>;
  translateAudio: Bound<typeof translateAudio>;
  waitForVideo: Bound<typeof waitForVideo>;
  createEmbeddings: Bound<typeof createEmbeddings>;
  rerank: Bound<typeof rerank>;
}

export { bearerAuth } from './bearer-auth.js';

export function createClient(options: ClientOptions): OmnigateClient {
  const raw: RawClient = createFetchClient<paths, 'application/json'>({
    baseUrl: options.baseUrl,
    headers: options.headers,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  raw.use(bearerAuth(options.apiKey));
  return {
    raw,
    GET: raw.GET,
    POST: raw.POST,
    DELETE: raw.DELETE,
    createChatCompletion: (body, callOptions) => createChatCompletion(raw, body, callOptions),
    createResponse: (body, callOptions) => createResponse(raw, body, callOptions),
    createMessage: (body, callOptions) => createMessage(raw, body, callOptions),
    countMessageTokens: (body, callOptions) => countMessageTokens(raw, body, callOptions),
    webSearch: (body, callOptions) => webSearch(raw, body, callOptions),
    createSearchAnswer: (body, callOptions) => createSearchAnswer(raw, body, callOptions),
    understandImage: (body, callOptions) => understandImage(raw, body, callOptions),
    webSearchTool: (body, callOptions) => webSearchTool(raw, body, callOptions),
    transcribeAudioTool: (body, callOptions) => transcribeAudioTool(raw, body, callOptions),
    streamChatCompletion: (body, callOptions) => streamChatCompletion(raw, body, callOptions),
    streamResponse: (body, callOptions) => streamResponse(raw, body, callOptions),
    streamMessage: (body, callOptions) => streamMessage(raw, body, callOptions),
    streamSearchAnswer: (body, callOptions) => streamSearchAnswer(raw, body, callOptions),
    generateImages: (body, callOptions) => generateImages(raw, body, callOptions),
    downloadMedia: (url, callOptions) => downloadMedia(url, { ...callOptions, fetch: options.fetch }),
    createSpeech: (body, callOptions) => createSpeech(raw, body, callOptions),
    createMusic: (body, callOptions) => createMusic(raw, body, callOptions),
    downloadFile: (id, callOptions) => downloadFile(raw, id, callOptions),
    downloadVideoContent: (id, variant, callOptions) => downloadVideoContent(raw, id, variant, callOptions),
    uploadFile: (input, callOptions) => uploadFile(raw, input, callOptions),
    transcribeAudio: (input, callOptions) => transcribeAudio(raw, input, callOptions),
    translateAudio: (input, callOptions) => translateAudio(raw, input, callOptions),
    waitForVideo: (id, waitOptions) => waitForVideo(raw, id, waitOptions),
    createEmbeddings: (body, callOptions) => createEmbeddings(raw, body, callOptions),
    rerank: (body, callOptions) => rerank(raw, body, callOptions),
  };
}

export {
  createAdminClient,
  type AdminClientOptions,
  type AdminKey,
  type AdminKeyCreated,
  type AdminKeyCreateRequest,
  type AdminKeyUpdateRequest,
  type LimitsBody,
  type OmnigateAdminClient,
  type Project,
  type ProjectCreateRequest,
  type ProjectDeleted,
  type ProjectUpdateRequest,
  type UsageSummary,
  type UsageSummaryQuery,
} from './admin.js';
export { OmnigateError, REQUEST_ID_HEADER, type OmnigateErrorFields } from './omnigate-error.js';
export { parseSse, type SseEvent } from './sse.js';
export { embeddingVectors } from './embeddings.js';
export type { CallOptions, RawClient } from './raw-client.js';
export type { BinaryBody, GeneratedImages, MusicAudioRequest, VideoContentVariant } from './binary.js';
export type { NonStreamRequest } from './json-calls.js';
export type { StreamRequest } from './streams.js';
export type { UploadFileInput } from './upload-file.js';
export type { TranscriptionInput, TranscriptionResult } from './transcribe-audio.js';
export type { WaitForVideoOptions } from './wait-for-video.js';
export type * from './types.js';
