/**
 * The `ImageModel` of an OpenAI-compatible upstream: `POST <base>/images/generations`
 * (https://platform.openai.com/docs/api-reference/images/create). The answer's images come as `b64_json` or as
 * `url`; a URL is fetched here through the SSRF guard, so callers only ever get bytes. The format is read from
 * the bytes (servers asked for webp may still send png), and so is the size.
 */
import { decodeBase64 } from '../../engines/body/large-base64.js';
import { UpstreamError } from '../../core/api-error.js';
import type { CallContext } from '../../core/call-context.js';
import type { GeneratedMedia, ImageCallOptions, ImageModel, ImageResult } from '../../core/models.js';
import type { UpstreamHttpClient } from '../upstream/http-client.js';
import { readImageHeader } from '../upstream/image-header.js';
import type { SafeFetcher } from '../upstream/safe-fetch.js';
import type { OpenAICompatibleConfig } from './http-client.js';

export interface OpenAICompatibleImageModelInput {
  config: OpenAICompatibleConfig;
  client: UpstreamHttpClient;
  fetcher: SafeFetcher;
  modelId: string;
}

interface UpstreamImage {
  b64_json?: unknown;
  url?: unknown;
  revised_prompt?: unknown;
}

const FORMAT_MEDIA_TYPES = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp' } as const;

/**
 * gpt-image models always answer base64 and reject `response_format` with a 400; DALL·E and most compatible
 * servers take it (and answer `url` without it).
 */
function takesResponseFormat(modelId: string): boolean {
  return !/^gpt-image/i.test(modelId);
}

export function imageRequestBody(options: ImageCallOptions, modelId: string): Record<string, unknown> {
  const body: Record<string, unknown> = { model: modelId, prompt: options.prompt, n: options.n };
  if (options.width !== undefined && options.height !== undefined) {
    body.size = `${options.width}x${options.height}`;
  }
  // png is every server's default; naming it would make DALL·E and older servers refuse a field they lack.
  if (options.outputFormat !== 'png') {
    body.output_format = options.outputFormat;
  }
  const optional = {
    output_compression: options.outputCompression,
    quality: options.quality,
    style: options.style,
    background: options.background,
    moderation: options.moderation,
    user: options.user,
  };
  for (const [name, value] of Object.entries(optional)) {
    if (value !== undefined) {
      body[name] = value;
    }
  }
  if (takesResponseFormat(modelId)) {
    body.response_format = 'b64_json';
  }
  return body;
}

export function createOpenAICompatibleImageModel(input: OpenAICompatibleImageModelInput): ImageModel {
  const { config, client, fetcher, modelId } = input;
  const provider = config.id;
  const malformed = (what: string) =>
    new UpstreamError(provider, 502, 200, `Upstream ${provider} answered an image generation with ${what}`);

  async function imageBytes(item: UpstreamImage, context: CallContext): Promise<Uint8Array> {
    if (typeof item.b64_json === 'string' && item.b64_json) {
      return decodeBase64(item.b64_json, { signal: context.signal });
    }
    if (typeof item.url === 'string' && item.url) {
      // Some servers put a data URL in `url`.
      const data = /^data:[^;,]*;base64,(.*)$/s.exec(item.url);
      if (data) {
        return decodeBase64(data[1]!, { signal: context.signal });
      }
      return (await fetcher.fetch(item.url, context.signal)).bytes;
    }
    throw malformed('an image that has neither b64_json nor url');
  }

  return {
    provider,
    modelId,
    async generate(options: ImageCallOptions, context: CallContext): Promise<ImageResult> {
      const answer = await client.postJson({
        path: '/images/generations',
        body: imageRequestBody(options, modelId),
        signal: context.signal,
      });
      const data = (answer as { data?: unknown } | null)?.data;
      if (!Array.isArray(data) || data.length === 0) {
        throw malformed('no images');
      }
      const items = data as UpstreamImage[];
      const fetched = await Promise.all(items.map((item) => imageBytes(item, context)));
      const images: GeneratedMedia[] = [];
      let headerSize: { width: number; height: number } | undefined;
      for (const bytes of fetched) {
        const header = readImageHeader(bytes);
        if (!header) {
          throw malformed('bytes that are not a png, jpeg, webp or gif image');
        }
        headerSize ??= { width: header.width, height: header.height };
        images.push({ data: bytes, mediaType: header.mediaType });
      }
      if (images.some((image) => image.mediaType !== FORMAT_MEDIA_TYPES[options.outputFormat])) {
        context.warn({
          field: 'output_format',
          reason: `upstream ${provider} answered ${images[0]!.mediaType} instead of ${options.outputFormat}`,
        });
      }
      // The header, not the answer's `size`: servers round or ignore the size asked for, and usage counts the
      // pixels really delivered.
      const { width, height } = headerSize!;
      const revised = items.find((item) => typeof item.revised_prompt === 'string')?.revised_prompt as
        | string
        | undefined;
      return {
        images,
        width,
        height,
        ...(revised !== undefined ? { revisedPrompt: revised } : {}),
        usage: { images: images.length, pixels: images.length * width * height },
      };
    },
  };
}
