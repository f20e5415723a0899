/**
 * `POST /v1/images/generations`: OpenAI's images format on any image model. `url` answers are signed links to
 * bytes kept in our blob store, whatever the model: a built-in render or an upstream's image alike.
 */
import type { AppDeps } from './app-deps.js';
import type { OperationHandler, ResponseBody } from '../http/operation-types.js';
import { decodeImageRequest } from '../formats/openai-media/image-request.js';
import { linkMedia } from '../calls/link-media.js';
import { prepareCall } from '../calls/prepare-call.js';
import type { CallRecord } from '../usage/call-record.js';

/** The model of a request that names none. */
export const DEFAULT_IMAGE_MODEL = 'local:image';

export function imageHandlers(deps: Pick<AppDeps, 'registry' | 'logger' | 'shutdownSignal' | 'now' | 'media'>): {
  createImage: OperationHandler<'createImage'>;
} {
  const now = deps.now ?? Date.now;
  return {
    async createImage(req, res) {
      const options = decodeImageRequest(req.body);
      const call = prepareCall(deps, res, req.body.model ?? DEFAULT_IMAGE_MODEL, 'image');
      const result = await call.model.generate(options, call.context);
      const record = res.locals.call as CallRecord;
      record.units = result.usage.images;
      record.media = { images: result.usage.images, pixels: result.usage.pixels };
      const asUrl = (req.body.response_format ?? 'url') === 'url';
      const created = now();
      const data = await Promise.all(
        result.images.map(async (image) => ({
          ...(asUrl ? { url: await linkMedia(deps.media, req, image, created) } : { b64_json: Buffer.from(image.data).toString('base64') }),
          revised_prompt: result.revisedPrompt ?? null,
        })),
      );
      const body = {
        created: Math.floor(created / 1000),
        data,
        output_format: formatOf(result.images[0]?.mediaType) ?? options.outputFormat,
        size: `${result.width}x${result.height}`,
      } satisfies ResponseBody<'createImage', 200>;
      res.json(body);
    },
  };
}

function formatOf(mediaType: string | undefined): 'png' | 'jpeg' | 'webp' | undefined {
  return mediaType === 'image/png' ? 'png' : mediaType === 'image/jpeg' ? 'jpeg' : mediaType === 'image/webp' ? 'webp' : undefined;
}
