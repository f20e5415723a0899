/** `generate_image`: the image generation of `POST /v1/images/generations` (calls/media/generate-images.ts). */
import { z } from 'zod';
import { generateImages, DEFAULT_IMAGE_MODEL } from '../calls/media/generate-images.js';
import { encodeImageToolAnswer } from '../formats/openai-media/image-answer.js';
import { defineTool } from './tool-definition.js';
import { toolMedia } from './tool-media.js';

export const generateImageTool = defineTool({
  name: 'generate_image',
  title: 'Generate an image',
  description: `Generate images from a text prompt. Returns each image inline (PNG, JPEG or WebP) and as a signed URL. Without \`model\`, the built-in offline engine (${DEFAULT_IMAGE_MODEL}) draws a landscape scene from the prompt's words.`,
  input: z.object({
    prompt: z.string().min(1).max(32000).describe('What to draw.'),
    model: z.string().min(1).max(256).optional().describe('An image model id or alias of GET /v1/models.'),
    size: z
      .string()
      .regex(/^(auto|[0-9]{2,4}x[0-9]{2,4})$/)
      .optional()
      .describe('WIDTHxHEIGHT in pixels, e.g. 1024x1024.'),
    n: z.number().int().min(1).max(4).optional().describe('How many images (default 1).'),
    output_format: z.enum(['png', 'jpeg', 'webp']).optional(),
    seed: z.number().int().min(0).max(4294967295).optional(),
  }),
  output: z.object({
    model: z.string(),
    size: z.string(),
    format: z.enum(['png', 'jpeg', 'webp']),
    revised_prompt: z.string().nullable(),
    images: z.array(z.object({ url: z.string(), media_type: z.string(), bytes: z.number().int() })),
  }),
  annotations: { readOnlyHint: false, openWorldHint: false, idempotentHint: false },
  async run(input, { deps, scope }) {
    const generated = await generateImages(deps, scope, { ...input, response_format: 'url' });
    const media = await Promise.all(
      generated.data.map((item, index) =>
        toolMedia(deps, scope, 'image', item.image, `image-${index + 1}.${generated.format}`, item.url),
      ),
    );
    return {
      ...encodeImageToolAnswer(generated),
      media,
    };
  },
});
