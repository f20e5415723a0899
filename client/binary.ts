/**
 * Calls whose 2xx body is bytes (audio, video, stored files). openapi-fetch parses JSON unless told
 * otherwise, so each passes `parseAs: 'arrayBuffer'` and returns the bytes with their `Content-Type`.
 */
import { OmnigateError, REQUEST_ID_HEADER } from './omnigate-error.js';
import type { CallOptions, RawClient } from './raw-client.js';
import type { ImageGenerationRequest, MusicGenerationRequest, SpeechRequest } from './types.js';
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

export async function createSpeech(
  raw: RawClient,
  body: SpeechRequest,
  options: CallOptions = {},
): Promise<BinaryBody> {
  return binaryBody(await raw.POST('/v1/audio/speech', { body, parseAs: 'arrayBuffer', signal: options.signal }));
}

export async function createMusic(
  raw: RawClient,
  body: MusicAudioRequest,
  options: CallOptions = {},
): Promise<BinaryBody> {
  return binaryBody(await raw.POST('/v1/music/generations', { body, parseAs: 'arrayBuffer', signal: options.signal }));
}

export async function downloadFile(raw: RawClient, id: string, options: CallOptions = {}): Promise<BinaryBody> {
  return binaryBody(
    await raw.GET('/v1/files/{id}/content', {
      params: { path: { id } },
      parseAs: 'arrayBuffer',
      signal: options.signal,
    }),
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

export interface GeneratedImages {
  /** The image files, decoded from base64, in request order. */
  images: Uint8Array[];
  /** `png`, `jpeg` or `webp`. */
  format: string;
  /** `WIDTHxHEIGHT`. */
  size: string;
  revisedPrompts: Array<string | null>;
  requestId: string | null;
}

/** Images as bytes: asks for `b64_json` and decodes it (for links, call `client.POST('/v1/images/generations', …)`). */
export async function generateImages(
  raw: RawClient,
  body: Omit<ImageGenerationRequest, 'response_format'>,
  options: CallOptions = {},
): Promise<GeneratedImages> {
  const result = await raw.POST('/v1/images/generations', {
    body: { ...body, response_format: 'b64_json' },
    signal: options.signal,
  });
  const answer = unwrap(result);
  return {
    // atob rather than Buffer: the client also runs in browsers.
    images: answer.data.map((item) => Uint8Array.from(atob(item.b64_json ?? ''), (char) => char.charCodeAt(0))),
    format: answer.output_format ?? 'png',
    size: answer.size ?? '',
    revisedPrompts: answer.data.map((item) => item.revised_prompt),
    requestId: result.response.headers.get(REQUEST_ID_HEADER),
  };
}

/**
 * The bytes behind a signed media link (`url` of an image or music answer). The link is its own credential, so
 * no key is sent; an expired or tampered link throws `OmnigateError` (410 / 403).
 */
export async function downloadMedia(
  url: string,
  options: CallOptions & { fetch?: (request: Request) => Promise<Response> } = {},
): Promise<BinaryBody> {
  const response = await (options.fetch ?? fetch)(new Request(url, { signal: options.signal }));
  const data = await response.arrayBuffer();
  if (!response.ok) {
    let body: unknown;
    try {
      body = JSON.parse(new TextDecoder().decode(data));
    } catch {
      body = undefined;
    }
    throw OmnigateError.fromResponse(response, body);
  }
  return {
    data,
    contentType: response.headers.get('content-type') ?? 'application/octet-stream',
    requestId: response.headers.get(REQUEST_ID_HEADER),
  };
}
