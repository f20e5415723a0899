/**
 * `POST /v1/images/generations`: OpenAI's images format on any image model. `url` answers are signed links to
 * bytes kept in our blob store, whatever the model: a built-in render or an upstream's image alike. The
 * generation itself (calls/media/generate-images.ts) and its encoding (formats/openai-media/image-answer.ts) are
 * shared with the `generate_image` tool.
 */
import type { AppDeps } from './app-deps.js';
import { scopeOf } from '../http/call-scope.js';
import type { OperationHandler, ResponseBody } from '../http/operation-types.js';
import { generateImages } from '../calls/media/generate-images.js';
import { encodeImagesResponse } from '../formats/openai-media/image-answer.js';

export { DEFAULT_IMAGE_MODEL } from '../calls/media/generate-images.js';

export function imageHandlers(deps: Pick<AppDeps, 'registry' | 'logger' | 'shutdownSignal' | 'now' | 'media'>): {
  createImage: OperationHandler<'createImage'>;
} {
  return {
    async createImage(req, res) {
      const generated = await generateImages(deps, scopeOf(res), req.body);
      res.json(encodeImagesResponse(generated) satisfies ResponseBody<'createImage', 200>);
    },
  };
}
