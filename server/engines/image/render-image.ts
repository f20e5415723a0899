/**
 * The `image` job of the media workers: a prompt's scene (scene.ts) rendered by resvg to PNG, or encoded by
 * sharp to JPEG or WebP. The same input gives the same bytes: the scene is seeded, resvg renders without
 * system fonts (the scene has no text), and both encoders are deterministic for a given build.
 */
import { Resvg } from '@resvg/resvg-js';
import sharp from 'sharp';
import { ApiError } from '../../core/api-error.js';
import type { ImageFormat } from '../../core/models.js';
import { seedFromText } from '../seeded-random.js';
import { buildScene } from './scene.js';

export const MIN_IMAGE_SIDE = 64;
export const MAX_IMAGE_SIDE = 2048;

export interface RenderImageInput {
  prompt: string;
  /** When absent, one is derived from the prompt, so an unseeded call is still repeatable. */
  seed?: number;
  index: number;
  width: number;
  height: number;
  format: ImageFormat;
  /** 0–100 for jpeg and webp, 100 the best quality; ignored for png. */
  compression?: number;
}

export interface RenderedImage {
  data: Uint8Array;
  mediaType: string;
}

const MEDIA_TYPES: Record<ImageFormat, string> = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp' };

/** The quality sharp uses when the caller gives none: its own defaults are 80 for both. */
const DEFAULT_QUALITY: Record<'jpeg' | 'webp', number> = { jpeg: 88, webp: 82 };

function checkSide(value: number, name: string): void {
  if (!Number.isInteger(value) || value < MIN_IMAGE_SIDE || value > MAX_IMAGE_SIDE) {
    throw new ApiError(
      400,
      `The built-in image engine renders ${MIN_IMAGE_SIDE} to ${MAX_IMAGE_SIDE} pixels per side; the ${name} ${value} is outside that.`,
      {
        code: 'invalid_size',
        param: 'size',
      },
    );
  }
}

/**
 * The bytes in an ArrayBuffer of their own: the pool transfers the output's buffers to the main thread, and a
 * native library's Buffer may be external memory or a slice of a shared pool, which cannot be transferred.
 */
function ownedCopy(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(bytes);
}

export async function renderImage(input: RenderImageInput): Promise<RenderedImage> {
  checkSide(input.width, 'width');
  checkSide(input.height, 'height');
  if (!Object.hasOwn(MEDIA_TYPES, input.format)) {
    throw new ApiError(400, `The built-in image engine writes png, jpeg or webp, not ${String(input.format)}.`, {
      code: 'invalid_value',
      param: 'output_format',
    });
  }
  const { svg } = buildScene({
    prompt: input.prompt,
    seed: input.seed ?? seedFromText(input.prompt),
    index: input.index,
    width: input.width,
    height: input.height,
  });
  const rendered = new Resvg(svg, { font: { loadSystemFonts: false }, fitTo: { mode: 'original' } }).render();
  if (input.format === 'png') {
    return { data: ownedCopy(rendered.asPng()), mediaType: MEDIA_TYPES.png };
  }
  const quality = Math.min(100, Math.max(1, Math.round(input.compression ?? DEFAULT_QUALITY[input.format])));
  // The scene is opaque, so the alpha channel carries nothing; dropping it keeps JPEG and WebP simple.
  const pixels = sharp(rendered.pixels, {
    raw: { width: rendered.width, height: rendered.height, channels: 4 },
  }).removeAlpha();
  const encoded = input.format === 'jpeg' ? pixels.jpeg({ quality, mozjpeg: false }) : pixels.webp({ quality });
  const data = await encoded.toBuffer();
  return { data: ownedCopy(data), mediaType: MEDIA_TYPES[input.format] };
}
