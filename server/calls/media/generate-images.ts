/**
 * One image generation as `POST /v1/images/generations` runs it, shared by that route and the `generate_image`
 * tool: decode OpenAI's request, resolve the model for the key, generate, record the usage, and keep each image
 * behind a signed link (or inline it as base64). Nothing here writes the HTTP answer.
 */
import { encodeBase64 } from '../../engines/body/large-base64.js';
import type { CallScope } from '../../http/call-scope.js';
import type { GeneratedImageAnswer } from '../../formats/openai-media/image-answer.js';
import { decodeImageRequest } from '../../formats/openai-media/image-request.js';
import type { components } from '../../../generated/api.js';
import { linkMedia, type MediaDeps } from '../link-media.js';
import { checkStorageRoom } from '../storage-quota.js';
import { prepareCall, type CallDeps } from '../prepare-call.js';

/** The model of a request that names none. */
export const DEFAULT_IMAGE_MODEL = 'local:image';

/** What one generation produced; formats/openai-media/image-answer.ts encodes it for the route and the tool. */
export type GeneratedImages = GeneratedImageAnswer;

export async function generateImages(
  deps: CallDeps & { media: MediaDeps; now?: () => number },
  scope: CallScope,
  body: components['schemas']['ImageGenerationRequest'],
): Promise<GeneratedImages> {
  const options = decodeImageRequest(body);
  const call = prepareCall(deps, scope, body.model ?? DEFAULT_IMAGE_MODEL, 'image');
  const keyId = scope.key.id;
  const asUrl = (body.response_format ?? 'url') === 'url';
  if (asUrl) {
    await checkStorageRoom(deps.media.storage, keyId, (deps.now ?? Date.now)()); // a full key is refused before the model runs
  }
  const result = await call.model.generate(options, call.context);
  const record = call.call;
  record.units = result.usage.images;
  record.media = { images: result.usage.images, pixels: result.usage.pixels };
  const created = (deps.now ?? Date.now)();
  const data = await Promise.all(
    result.images.map(async (image) =>
      asUrl
        ? { url: await linkMedia(deps.media, scope.baseUrl, image, created, keyId), image }
        : { b64_json: await encodeBase64(image.data), image },
    ),
  );
  return {
    result,
    model: call.resolved.entry.id,
    format: formatOf(result.images[0]?.mediaType) ?? options.outputFormat,
    data,
    created,
  };
}

function formatOf(mediaType: string | undefined): 'png' | 'jpeg' | 'webp' | undefined {
  return mediaType === 'image/png'
    ? 'png'
    : mediaType === 'image/jpeg'
      ? 'jpeg'
      : mediaType === 'image/webp'
        ? 'webp'
        : undefined;
}
