/**
 * `image_understanding` (also `POST /v1/tools/image_understanding`): answers a prompt about one image. The
 * image comes through calls/media/input-image.ts, as a video's start image does (URL through the SSRF guard, `data:`
 * URL, or a stored file id). A vision model (the request's `model`, else the first configured model of type
 * `vision`) is asked through the canonical chat core; without one, the built-in analysis
 * (engines/image-analysis) measures the image and describes it, and the prompt is not interpreted: the answer
 * says so rather than pretend to have understood the question. The analysis is the `analyse-image` job of the
 * media pool, like `local:image`'s rendering: sharp, exifr and file-type load in a worker on first use, never
 * in this thread, and a busy pool answers 429 `engine_busy`, a slow analysis 504, a caller gone stops it.
 */
import { z } from 'zod';
import { ApiError } from '../core/api-error.js';
import { randomId } from '../core/random-id.js';
import { quoteValue } from '../core/quote-value.js';
import type { GeneratedMedia } from '../core/models.js';
import { encodeBase64 } from '../engines/body/large-base64.js';
import type { ImageFacts } from '../engines/image-analysis/analyse-image.js';
import { readInputImage, storedImageFiles } from '../calls/media/input-image.js';
import { prepareCall } from '../calls/prepare-call.js';
import { defineTool, type ToolInvocation } from './tool-definition.js';

/** The built-in analysis, named like a model so keys can be limited to it and usage records name it. */
export const BUILT_IN_VISION_MODEL = 'local:vision';

const colour = z.object({ name: z.string(), hex: z.string(), share: z.number() });

const analysis = z.object({
  media_type: z.string(),
  format: z.string(),
  width: z.number().int(),
  height: z.number().int(),
  channels: z.number().int(),
  has_alpha: z.boolean(),
  is_opaque: z.boolean(),
  brightness: z.number(),
  entropy: z.number(),
  dominant_colour: colour,
  palette: z.array(colour),
  exif: z
    .object({
      make: z.string().optional(),
      model: z.string().optional(),
      software: z.string().optional(),
      taken_at: z.string().optional(),
      orientation: z.number().int().optional(),
      latitude: z.number().optional(),
      longitude: z.number().optional(),
    })
    .nullable(),
  description: z.string(),
});

function analysisOf(facts: ImageFacts): z.input<typeof analysis> {
  return {
    media_type: facts.mediaType,
    format: facts.format,
    width: facts.width,
    height: facts.height,
    channels: facts.channels,
    has_alpha: facts.hasAlpha,
    is_opaque: facts.isOpaque,
    brightness: facts.brightness,
    entropy: facts.entropy,
    dominant_colour: facts.dominant,
    palette: facts.palette,
    exif: facts.exif
      ? {
          make: facts.exif.make,
          model: facts.exif.model,
          software: facts.exif.software,
          taken_at: facts.exif.takenAt,
          orientation: facts.exif.orientation,
          latitude: facts.exif.latitude,
          longitude: facts.exif.longitude,
        }
      : null,
    description: facts.description,
  };
}

/** The vision model to ask, or undefined for the built-in analysis. */
function visionModelOf(requested: string | undefined, invocation: ToolInvocation): string | undefined {
  if (requested !== undefined) {
    return requested === BUILT_IN_VISION_MODEL ? undefined : requested;
  }
  return invocation.deps.registry.list().find((entry) => entry.type === 'vision')?.id;
}

async function readImage(
  input: { image_url?: string; file_id?: string },
  signal: AbortSignal,
  invocation: ToolInvocation,
): Promise<GeneratedMedia> {
  const { deps, scope } = invocation;
  // The key's own stored file, as on every files route: another key's id is unknown.
  const storedFile = storedImageFiles({ store: deps.files.store, blobs: deps.media.blobs }, scope.key.id, {
    param: 'file_id',
    nowSeconds: Math.floor((deps.now ?? Date.now)() / 1000),
  });
  const image = await readInputImage(
    { reference: { image_url: input.image_url, file_id: input.file_id }, storedFile, signal },
    {
      param: input.file_id !== undefined ? 'file_id' : 'image_url',
      urlParam: 'image_url',
      fileParam: 'file_id',
      gif: true,
      resolve: invocation.deps.tools?.resolveHost,
      blockedReason: invocation.deps.tools?.blockedReason,
    },
  );
  if (!image) {
    throw new ApiError(400, 'Give the image as `image_url` or `file_id`.', {
      param: 'image_url',
      code: 'missing_image',
    });
  }
  return image;
}

export const imageUnderstandingTool = defineTool({
  name: 'image_understanding',
  title: 'Image understanding',
  description:
    'Answer a question about an image given by URL, data URL or uploaded file id. With a vision model configured, the model answers; otherwise the built-in analysis reports format, size, transparency, brightness, named dominant colours, detail and EXIF camera data (it does not recognise objects).',
  input: z.object({
    prompt: z.string().min(1).max(8000).describe('The question or instruction about the image.'),
    image_url: z
      .string()
      .min(1)
      .regex(/^(https?:\/\/|data:)/)
      .optional()
      .describe('An http(s) URL or a data: URL.'),
    file_id: z.string().min(1).max(128).optional().describe('The id of an image uploaded with POST /v1/files.'),
    model: z
      .string()
      .min(1)
      .optional()
      .describe(`A vision model id or alias; ${BUILT_IN_VISION_MODEL} for the built-in analysis.`),
    detail: z.enum(['low', 'high', 'auto']).optional(),
  }),
  output: z.object({
    object: z.literal('tool.result'),
    tool: z.literal('image_understanding'),
    id: z.string(),
    model: z.string(),
    content: z.string(),
    usage: z
      .object({ prompt_tokens: z.number().int(), completion_tokens: z.number().int(), total_tokens: z.number().int() })
      .optional(),
    analysis: analysis.optional(),
  }),
  annotations: { readOnlyHint: true, openWorldHint: true },
  async run(input, invocation) {
    if ((input.image_url === undefined) === (input.file_id === undefined)) {
      throw new ApiError(400, 'Give exactly one of `image_url` and `file_id`.', {
        param: 'image_url',
        code: 'invalid_image_source',
      });
    }
    const { deps, scope } = invocation;
    const record = scope.call;
    const id = randomId('tr');
    const modelId = visionModelOf(input.model, invocation);
    if (modelId !== undefined) {
      // Resolve (and check the key's limits) before fetching anything: a refused call costs no download.
      const call = prepareCall(deps, scope, modelId, 'vision');
      const image = await readImage(input, call.context.signal, invocation);
      const result = await call.model.generate(
        {
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: input.prompt },
                {
                  type: 'image',
                  data: await encodeBase64(image.data),
                  mediaType: image.mediaType,
                  detail: input.detail,
                },
              ],
            },
          ],
        },
        call.context,
      );
      record.usage = result.usage;
      const content = result.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
      return {
        output: {
          object: 'tool.result' as const,
          tool: 'image_understanding' as const,
          id,
          model: call.resolved.entry.id,
          content,
          usage: {
            prompt_tokens: result.usage.inputTokens,
            completion_tokens: result.usage.outputTokens,
            total_tokens: result.usage.inputTokens + result.usage.outputTokens,
          },
        },
        text: content,
      };
    }
    const key = scope.key;
    record.modelRequested = input.model ?? BUILT_IN_VISION_MODEL;
    if (key.allowedModels.length > 0 && !key.allowedModels.includes(BUILT_IN_VISION_MODEL)) {
      throw new ApiError(403, `This API key may not use the model ${quoteValue(BUILT_IN_VISION_MODEL)}.`, {
        code: 'model_not_allowed',
        param: 'model',
      });
    }
    record.model = BUILT_IN_VISION_MODEL;
    record.provider = 'local';
    const signal = scope.signal;
    // Fetched before a slot is taken: a slow download must not hold a worker the engines could use.
    const image = await readImage(input, signal, invocation);
    const facts = await deps.mediaPool.use(signal, (slot) => slot.run('analyse-image', { bytes: image.data }), {
      owner: key.id,
    });
    record.units = 1;
    record.media = { images: 1, pixels: facts.width * facts.height };
    const content = `${facts.description} (Built-in analysis: measured facts only; no vision model is configured to answer "${input.prompt.slice(0, 200)}".)`;
    return {
      output: {
        object: 'tool.result' as const,
        tool: 'image_understanding' as const,
        id,
        model: BUILT_IN_VISION_MODEL,
        content,
        analysis: analysisOf(facts),
      },
      text: content,
    };
  },
});
