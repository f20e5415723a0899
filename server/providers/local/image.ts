/**
 * The built-in image model (`local:image`): procedural scenes drawn from the prompt's words, rendered in the
 * media pool (engines/image). All `n` images of a call are rendered in the one slot the call holds, so a call
 * for ten images cannot take more than its share of the pool.
 */
import type { CallContext } from '../../core/call-context.js';
import type { ImageCallOptions, ImageModel, ImageResult } from '../../core/models.js';
import type { MediaPool } from '../../engines/media-pool.js';

/** OpenAI's default square, and what `local:image` draws when the caller names no size. */
const DEFAULT_SIDE = 1024;

/** OpenAI settings that shape a real model's output but mean nothing to a drawn scene. */
const UNUSED_SETTINGS = ['style', 'background'] as const;

export function createLocalImageModel(pool: MediaPool): ImageModel {
  return {
    provider: 'local',
    modelId: 'image',
    async generate(options: ImageCallOptions, context: CallContext): Promise<ImageResult> {
      const width = options.width ?? options.height ?? DEFAULT_SIDE;
      const height = options.height ?? options.width ?? DEFAULT_SIDE;
      for (const setting of UNUSED_SETTINGS) {
        if (options[setting] !== undefined && options[setting] !== 'auto') {
          context.warn({
            field: setting,
            reason: `the built-in image engine draws opaque procedural scenes and ignores ${setting}`,
          });
        }
      }
      const images = await pool.use(
        context.signal,
        async (slot) => {
          const rendered = [];
          for (let index = 0; index < options.n; index++) {
            rendered.push(
              await slot.run('image', {
                prompt: options.prompt,
                seed: options.seed,
                index,
                width,
                height,
                format: options.outputFormat,
                compression: options.outputCompression,
              }),
            );
          }
          return rendered;
        },
        { owner: context.owner },
      );
      return { images, width, height, usage: { images: images.length, pixels: images.length * width * height } };
    },
  };
}
