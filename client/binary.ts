/**
 * Calls whose 2xx body is bytes (audio, video, stored files). openapi-fetch parses JSON unless told
 * otherwise, so each passes `parseAs: 'arrayBuffer'` and returns the bytes with their `Content-Type`.
 */
import { REQUEST_ID_HEADER } from './omnigate-error.js';
import type { CallOptions, RawClient } from './raw-client.js';
import type { MusicGenerationRequest, SpeechRequest } from './types.js';
import { unwrap, type FetchResult } from './unwrap.js';

export interface BinaryBody {
  data: ArrayBuffer;
  /** The answer's `Content-Type`, e.g. `audio/mpeg`, `video/mp4`; `application/octet-stream` if absent. */
  contentType: string;
  requestId: string | null;
}

/** Music as audio bytes; for `url` or `b64_json` call `client.POST('/v1/music/generations', …)`, which answers JSON. */
export type MusicAudioRequest = Omit<MusicGenerationRequest, 'response_format'> & {
  response_format?: Exclude<MusicGenerationRequest['response_format'], 'url' | 'b64_json'>;
};

export type VideoContentVariant = 'video' | 'thumbnail';

function binaryBody(result: FetchResult<ArrayBuffer>): BinaryBody {
  const data = unwrap(result);
  return {
    data,
    contentType: result.response.headers.get('content-type') ?? 'application/octet-stream',
    requestId: result.response.headers.get(REQUEST_ID_HEADER),
  };
}

export async function createSpeech(raw: RawClient, body: SpeechRequest, options: CallOptions = {}): Promise<BinaryBody> {
  return binaryBody(await raw.POST('/v1/audio/speech', { body, parseAs: 'arrayBuffer', signal: options.signal }));
}

export async function createMusic(raw: RawClient, body: MusicAudioRequest, options: CallOptions = {}): Promise<BinaryBody> {
  return binaryBody(await raw.POST('/v1/music/generations', { body, parseAs: 'arrayBuffer', signal: options.signal }));
}

export async function downloadFile(raw: RawClient, id: string, options: CallOptions = {}): Promise<BinaryBody> {
  return binaryBody(
    await raw.GET('/v1/files/{id}/content', { params: { path: { id } }, parseAs: 'arrayBuffer', signal: options.signal }),
  );
}

export async function downloadVideoContent(
  raw: RawClient,
  id: string,
  variant?: VideoContentVariant,
  options: CallOptions = {},
): Promise<BinaryBody> {
  return binaryBody(
    await raw.GET('/v1/videos/{id}/content', {
      params: { path: { id }, query: variant === undefined ? {} : { variant } },
      parseAs: 'arrayBuffer',
      signal: options.signal,
    }),
  );
}
