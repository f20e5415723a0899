/**
 * The largest image a caller may hand us, in pixels: decoding costs time and memory in proportion to them (a
 * 100 Mpx PNG held a media worker 10–18 s), and sharp's own default allows 268 Mpx. Checked from the image's
 * header when a request arrives, and given to sharp as `limitInputPixels` on every decode of caller input, so
 * a header that lies is stopped by the decoder too. Both refusals are the same 400, naming the limit.
 */
import { ApiError } from './api-error.js';

/** 40 Mpx: larger than any camera photo a model needs (8000×5000), far below sharp's 268 Mpx. */
export const MAX_INPUT_PIXELS = 40_000_000;

export function inputPixelsError(param: string, size?: { width: number; height: number }): ApiError {
  const what = size
    ? `is ${size.width}×${size.height} (${Math.round((size.width * size.height) / 1e5) / 10} Mpx), more`
    : 'has more pixels';
  return new ApiError(
    400,
    `The image in ${param} ${what} than the limit of ${MAX_INPUT_PIXELS / 1e6} Mpx; scale it down.`,
    {
      param,
      code: 'image_too_large',
    },
  );
}

/** Throws the 400 when the header's size is past the limit. */
export function checkInputPixels(param: string, size: { width: number; height: number }): void {
  if (size.width * size.height > MAX_INPUT_PIXELS) {
    throw inputPixelsError(param, size);
  }
}

/** Whether sharp refused the decode for `limitInputPixels` ("Input image exceeds pixel limit"). */
export function isPixelLimitError(error: unknown): boolean {
  return error instanceof Error && /pixel limit/i.test(error.message);
}
