import { createHash } from 'node:crypto';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../core/api-error.js';
import { renderImage, type RenderImageInput } from './render-image.js';

const input = (overrides: Partial<RenderImageInput> = {}): RenderImageInput => ({
  prompt: 'calm ocean waves under a golden sun',
  seed: 7,
  index: 0,
  width: 320,
  height: 200,
  format: 'png',
  ...overrides,
});
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const ascii = (bytes: Uint8Array, from: number, to: number) => Buffer.from(bytes.subarray(from, to)).toString('latin1');

/** Width and height from the PNG's IHDR chunk, which must come first after the signature. */
function pngSize(bytes: Uint8Array): { width: number; height: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  expect([...bytes.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  expect(ascii(bytes, 12, 16)).toBe('IHDR');
  return { width: view.getUint32(16), height: view.getUint32(20) };
}

async function meanBrightness(bytes: Uint8Array): Promise<number> {
  const { channels } = await sharp(bytes).stats();
  return (channels[0].mean + channels[1].mean + channels[2].mean) / 3;
}

describe('renderImage', () => {
  it('renders a PNG of the requested size', async () => {
    const image = await renderImage(input({ width: 333, height: 129 }));
    expect(image.mediaType).toBe('image/png');
    expect(pngSize(image.data)).toEqual({ width: 333, height: 129 });
  });

  it('encodes JPEG and WebP of the requested size', async () => {
    const jpeg = await renderImage(input({ format: 'jpeg' }));
    expect(jpeg.mediaType).toBe('image/jpeg');
    expect([...jpeg.data.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
    expect(await sharp(jpeg.data).metadata()).toMatchObject({ format: 'jpeg', width: 320, height: 200 });

    const webp = await renderImage(input({ format: 'webp' }));
    expect(webp.mediaType).toBe('image/webp');
    expect(ascii(webp.data, 0, 4)).toBe('RIFF');
    expect(ascii(webp.data, 8, 12)).toBe('WEBP');
    expect(await sharp(webp.data).metadata()).toMatchObject({ format: 'webp', width: 320, height: 200 });
  });

  it('trades bytes for quality with the compression setting', async () => {
    const best = await renderImage(input({ format: 'jpeg', compression: 100 }));
    const worst = await renderImage(input({ format: 'jpeg', compression: 10 }));
    expect(worst.data.length).toBeLessThan(best.data.length / 2);
  });

  it.each(['png', 'jpeg', 'webp'] as const)(
    'gives identical %s bytes for the same request and other bytes for another image',
    async (format) => {
      const first = sha((await renderImage(input({ format }))).data);
      expect(sha((await renderImage(input({ format }))).data)).toBe(first);
      expect(sha((await renderImage(input({ format, index: 1 }))).data)).not.toBe(first);
      expect(sha((await renderImage(input({ format, seed: 8 }))).data)).not.toBe(first);
    },
  );

  it('derives a repeatable seed from the prompt when none is given', async () => {
    const unseeded = { seed: undefined };
    const first = sha((await renderImage(input(unseeded))).data);
    expect(sha((await renderImage(input(unseeded))).data)).toBe(first);
    expect(
      sha((await renderImage(input({ ...unseeded, prompt: 'calm ocean waves under a golden sun!' }))).data),
    ).not.toBe(first);
  });

  it('paints a night scene far darker than a day scene', async () => {
    const night = await meanBrightness((await renderImage(input({ prompt: 'a field at night' }))).data);
    const day = await meanBrightness((await renderImage(input({ prompt: 'a field on a sunny day' }))).data);
    expect(night).toBeLessThan(70);
    expect(day).toBeGreaterThan(130);
  });

  it('shows a named colour in the pixels', async () => {
    const redness = async (prompt: string) => {
      const { channels } = await sharp((await renderImage(input({ prompt, width: 256, height: 256 }))).data).stats();
      return channels[0].mean - (channels[1].mean + channels[2].mean) / 2;
    };
    expect(await redness('red balloons over a field')).toBeGreaterThan((await redness('balloons over a field')) + 15);
  });

  it.each([
    [{ width: 63 }, 'width'],
    [{ height: 2049 }, 'height'],
    [{ width: 100.5 }, 'width'],
  ])('refuses the size %j with a 400 on the size parameter', async (size, side) => {
    const failure = await renderImage(input(size)).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApiError);
    expect(failure).toMatchObject({ status: 400, param: 'size', code: 'invalid_size' });
    expect((failure as ApiError).message).toContain(side);
  });

  it('renders the smallest and largest sizes', async () => {
    expect(pngSize((await renderImage(input({ width: 64, height: 64 }))).data)).toEqual({ width: 64, height: 64 });
    expect(pngSize((await renderImage(input({ width: 2048, height: 64 }))).data)).toEqual({ width: 2048, height: 64 });
  });
});
