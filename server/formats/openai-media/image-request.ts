/**
 * OpenAI's image generation request → `ImageCallOptions`: the shape (`size` or `aspect_ratio`, never both),
 * the format, and the settings only upstream models use.
 */
import { ApiError } from '../../core/api-error.js';
import type { ImageCallOptions, ImageFormat } from '../../core/models.js';
import type { components } from '../../../generated/api.js';

type ImageRequest = components['schemas']['ImageGenerationRequest'];

/** The longer side of an image shaped only by `aspect_ratio`. */
const ASPECT_LONG_SIDE = 1024;

function sizeOf(body: ImageRequest): { width?: number; height?: number } {
  if (body.size !== undefined && body.aspect_ratio !== undefined) {
    throw new ApiError(400, 'Give the image shape with either `size` or `aspect_ratio`, not both.', {
      param: 'aspect_ratio',
      code: 'conflicting_parameters',
    });
  }
  if (body.size !== undefined && body.size !== 'auto') {
    const [width, height] = body.size.split('x').map(Number);
    return { width, height };
  }
  if (body.aspect_ratio !== undefined) {
    // The spec's enum: always `w:h`.
    const [w, h] = body.aspect_ratio.split(':').map(Number) as [number, number];
    // Even sides: video encoders and some viewers need them, and 16:9 of 1024 is 576 exactly.
    const even = (value: number) => Math.max(2, Math.round(value / 2) * 2);
    return w >= h
      ? { width: ASPECT_LONG_SIDE, height: even((ASPECT_LONG_SIDE * h) / w) }
      : { width: even((ASPECT_LONG_SIDE * w) / h), height: ASPECT_LONG_SIDE };
  }
  return {};
}

export function decodeImageRequest(body: ImageRequest): ImageCallOptions {
  const outputFormat: ImageFormat = body.output_format ?? 'png';
  if (body.background === 'transparent' && outputFormat === 'jpeg') {
    throw new ApiError(400, 'A transparent background needs `output_format` png or webp; JPEG has no transparency.', {
      param: 'background',
    });
  }
  return {
    prompt: body.prompt,
    n: body.n ?? 1,
    ...sizeOf(body),
    seed: body.seed,
    outputFormat,
    outputCompression: body.output_compression,
    quality: body.quality,
    style: body.style,
    background: body.background,
    moderation: body.moderation,
    user: body.user,
  };
}
