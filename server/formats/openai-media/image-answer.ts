/**
 * The answer of one image generation, in the two shapes it goes out in: `POST /v1/images/generations`'s
 * `ImagesResponse` and the `generate_image` tool's output (MCP and REST alike). Both are made here, from the
 * one description of what was generated, so the route and the tool cannot drift apart (size, format, prompt).
 */
import type { GeneratedMedia, ImageResult } from '../../core/models.js';
import type { components } from '../../../generated/api.js';

export type ImageAnswerFormat = 'png' | 'jpeg' | 'webp';

/** What one generation produced: each image kept behind a signed link (`url`) or inlined (`b64_json`). */
export interface GeneratedImageAnswer {
  result: ImageResult;
  /** The resolved model id. */
  model: string;
  format: ImageAnswerFormat;
  data: Array<{ url?: string; b64_json?: string; image: GeneratedMedia }>;
  /** Epoch milliseconds. */
  created: number;
}

export interface ImageToolOutput {
  model: string;
  size: string;
  format: ImageAnswerFormat;
  revised_prompt: string | null;
  images: Array<{ url: string; media_type: string; bytes: number }>;
}

const sizeOf = (result: ImageResult) => `${result.width}x${result.height}`;

/** `ImagesResponse`: each image as its link or its base64 bytes, as the request asked. */
export function encodeImagesResponse(generated: GeneratedImageAnswer): components['schemas']['ImagesResponse'] {
  return {
    created: Math.floor(generated.created / 1000),
    data: generated.data.map(({ url, b64_json }) => ({
      ...(url !== undefined ? { url } : { b64_json }),
      revised_prompt: generated.result.revisedPrompt ?? null,
    })),
    output_format: generated.format,
    size: sizeOf(generated.result),
  };
}

/** The `generate_image` tool's output and the text a language model reads; every image is linked. */
export function encodeImageToolAnswer(generated: GeneratedImageAnswer): { output: ImageToolOutput; text: string } {
  const size = sizeOf(generated.result);
  const images = generated.data.map(({ url, image }) => ({
    url: url ?? '',
    media_type: image.mediaType,
    bytes: image.data.byteLength,
  }));
  return {
    output: {
      model: generated.model,
      size,
      format: generated.format,
      revised_prompt: generated.result.revisedPrompt ?? null,
      images,
    },
    text: `Generated ${images.length} ${size} ${generated.format.toUpperCase()} image${images.length === 1 ? '' : 's'} with ${generated.model}:\n${images.map((item) => item.url).join('\n')}`,
  };
}
