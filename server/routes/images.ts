/**
 * `POST /v1/images/generations`: OpenAI's images format on any image model. `url` answers are signed links to
 * bytes kept in our blob store, whatever the model: a built-in render or an upstream's image alike. The
 * generation itself (calls/media/generate-images.ts) is shared with the `generate_image` tool.
 */
import type { AppDeps } from './app-deps.js';
import { scopeOf } from '../http/call-scope.js';
import type { OperationHandler, ResponseBody } from '../http/operation-types.js';
import { generateImages } from '../calls/media/generate-images.js';

export { DEFAULT_IMAGE_MODEL } from '../calls/media/generate-images.js';

export function imageHandlers(deps: Pick<AppDeps, 'registry' | 'logger' | 'shutdownSignal' | 'now' | 'media'>): {
  createImage: OperationHandler<'createImage'>;
} {
  return {
    async createImage(req, res) {
      const generated = await generateImages(deps, scopeOf(res), req.body);
      const body = {
        created: Math.floor(generated.created / 1000),
        data: generated.data.map(({ url, b64_json }) => ({ ...(url !== undefined ? { url } : { b64_json }), revised_prompt: generated.result.revisedPrompt ?? null })),
        output_format: generated.format,
        size: `${generated.result.width}x${generated.result.height}`,
      } satisfies ResponseBody<'createImage', 200>;
      res.json(body);
    },
  };
}
