/**
 * The decoders of caller images stop at MAX_INPUT_PIXELS themselves (sharp's `limitInputPixels`), whatever
 * checked the header before: a 42 Mpx PNG (one colour, so it is small) is the documented 400 from both the
 * image analysis and the video's input backdrop, and one just under the limit still decodes.
 */
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../core/api-error.js';
import { MAX_INPUT_PIXELS } from '../core/input-pixels.js';
import { analyseImage } from './image-analysis/analyse-image.js';
import { readBackdrop } from './video/input-backdrop.js';

const png = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: '#3366cc' } })
    .png({ compressionLevel: 1, adaptiveFiltering: false })
    .toBuffer();

describe('the input pixel limit of the decoders', () => {
  it('refuses an image past 40 Mpx with a 400 naming the limit, in the analysis and the video backdrop', async () => {
    const huge = new Uint8Array(await png(7000, 6000));
    expect(7000 * 6000).toBeGreaterThan(MAX_INPUT_PIXELS);
    for (const decode of [() => analyseImage(huge), () => readBackdrop(huge, 64, 64)]) {
      const error = await decode().then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ status: 400, code: 'image_too_large' });
      expect((error as ApiError).message).toContain('40 Mpx');
    }
  });

  it('decodes an image within the limit', async () => {
    const fits = new Uint8Array(await png(2000, 1500));
    expect((await analyseImage(fits)).width).toBe(2000);
    expect((await readBackdrop(fits, 64, 64)).byteLength).toBe(64 * 64 * 4);
  });
});
