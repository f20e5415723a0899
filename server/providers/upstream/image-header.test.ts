import { describe, expect, it } from 'vitest';
import { sampleImage, type SampleImageFormat } from '../../../test/fakes/media-samples.js';
import { readImageHeader } from './image-header.js';

describe('readImageHeader', () => {
  it.each<[SampleImageFormat, string]>([
    ['png', 'image/png'],
    ['jpeg', 'image/jpeg'],
    ['webp', 'image/webp'],
    ['gif', 'image/gif'],
  ])('reads %s made by sharp', async (format, mediaType) => {
    for (const [width, height] of [
      [3, 2],
      [640, 360],
      [1024, 1536],
    ] as const) {
      const header = readImageHeader(await sampleImage(format, width, height));
      expect(header).toEqual({ mediaType, width, height });
    }
  });

  it('reads lossless and extended webp', async () => {
    const sharp = (await import('sharp')).default;
    const base = sharp({
      create: { width: 301, height: 17, channels: 4, background: { r: 1, g: 2, b: 3, alpha: 0.5 } },
    });
    expect(readImageHeader(new Uint8Array(await base.clone().webp({ lossless: true }).toBuffer()))).toEqual({
      mediaType: 'image/webp',
      width: 301,
      height: 17,
    });
    expect(readImageHeader(new Uint8Array(await base.clone().webp({ quality: 50 }).toBuffer()))).toEqual({
      mediaType: 'image/webp',
      width: 301,
      height: 17,
    });
  });

  it('knows nothing else', () => {
    expect(readImageHeader(new TextEncoder().encode('{"error":"not an image"}'))).toBeUndefined();
    expect(readImageHeader(new Uint8Array([0x89, 0x50]))).toBeUndefined();
  });
});
