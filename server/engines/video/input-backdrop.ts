/**
 * A caller's starting image (`input_reference`) as the backdrop of the first frames: cropped to the video's
 * size, held for half a second, then cross-faded into the animation over a second and a half.
 */
import sharp from 'sharp';
import { ApiError } from '../../core/api-error.js';
import { inputPixelsError, isPixelLimitError, MAX_INPUT_PIXELS } from '../../core/input-pixels.js';
import type { PixelFrame } from './pixel-frame.js';

const HOLD_SECONDS = 0.5;
const FADE_SECONDS = 1.5;

/** The image's RGBA pixels at exactly `width`×`height` (scaled to cover, centre kept). */
export async function readBackdrop(image: Uint8Array, width: number, height: number): Promise<Uint8Array> {
  try {
    const pixels = await sharp(image, { limitInputPixels: MAX_INPUT_PIXELS })
      .rotate()
      .resize(width, height, { fit: 'cover' })
      .removeAlpha()
      .ensureAlpha(1)
      .raw()
      .toBuffer();
    return new Uint8Array(pixels.buffer, pixels.byteOffset, pixels.byteLength);
  } catch (error) {
    if (isPixelLimitError(error)) {
      throw inputPixelsError('input_reference');
    }
    throw new ApiError(
      400,
      `The input image could not be read: ${error instanceof Error ? error.message : String(error)}`,
      {
        code: 'invalid_image',
        param: 'input_reference',
        cause: error,
      },
    );
  }
}

/** How much of the animation shows at `t` seconds (0: only the image, 1: only the animation). */
export function animationWeight(t: number): number {
  return Math.min(1, Math.max(0, (t - HOLD_SECONDS) / FADE_SECONDS));
}

/** Lays the backdrop over the drawn frame at the weight `t` gives; does nothing once the fade is over. */
export function applyBackdrop(frame: PixelFrame, backdrop: Uint8Array, t: number): void {
  const weight = Math.round(animationWeight(t) * 256);
  if (weight >= 256) {
    return;
  }
  const bytes = frame.bytes;
  for (let index = 0; index < bytes.length; index++) {
    const under = backdrop[index]!; // the backdrop is a frame of the same size
    bytes[index] = under + (((bytes[index]! - under) * weight) >> 8);
  }
}
