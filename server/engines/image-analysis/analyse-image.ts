/**
 * The built-in image understanding: facts measured from the pixels, with no model. It runs as the
 * `analyse-image` job of the media worker pool (media-jobs.ts): sharp with libvips, exifr and file-type cost
 * about 35 MiB of memory once loaded, which only a worker that analyses an image should pay, and the pool
 * bounds how many decodes run at once (a 100-megapixel image is allowed). The palette is a histogram of a
 * 32×32 thumbnail (1,024 pixels). The description is composed only from what was measured: it never claims
 * to recognise objects.
 */
import sharp, { type ChannelStats, type Metadata, type Sharp, type Stats } from 'sharp';
import { fileTypeFromBuffer } from 'file-type';
import { ApiError } from '../../core/api-error.js';
import { inputPixelsError, isPixelLimitError, MAX_INPUT_PIXELS } from '../../core/input-pixels.js';
import { colourName, hexOf } from './colour-names.js';
import { readExif, type ExifFacts } from './read-exif.js';

export interface PaletteColour {
  name: string;
  hex: string;
  /** Share of the pixels, 0–1. */
  share: number;
}

export interface ImageFacts {
  /** What the bytes are, sniffed from their magic (file-type), e.g. `image/png`. */
  mediaType: string;
  /** The decoder's name for the format (sharp reports AVIF as `heif`). */
  format: string;
  width: number;
  height: number;
  channels: number;
  hasAlpha: boolean;
  /** False when some pixel is not fully opaque (an alpha channel alone says nothing). */
  isOpaque: boolean;
  /** Rec. 709 luma of the mean colour, 0 (black) – 1 (white). */
  brightness: number;
  /** Shannon entropy of the greyscale histogram in bits (0 flat – 8 noisy): a rough measure of detail. */
  entropy: number;
  dominant: PaletteColour;
  palette: PaletteColour[];
  exif?: ExifFacts;
  description: string;
}

/** Buckets of 3 bits per channel: coarse enough that anti-aliased edges do not split a colour. */
const BUCKET_SHIFT = 5;
const PALETTE_SIZE = 5;

async function paletteOf(image: Sharp): Promise<PaletteColour[]> {
  const { data, info } = await image
    .clone()
    .removeAlpha()
    .resize(32, 32, { fit: 'fill' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const buckets = new Map<number, { count: number; r: number; g: number; b: number }>();
  const pixels = info.width * info.height;
  for (let at = 0; at < data.length; at += info.channels) {
    // Whole pixels of info.channels bytes: every index here is within data.
    const r = data[at]!;
    const g = info.channels >= 3 ? data[at + 1]! : r;
    const b = info.channels >= 3 ? data[at + 2]! : r;
    const key = ((r >> BUCKET_SHIFT) << 6) | ((g >> BUCKET_SHIFT) << 3) | (b >> BUCKET_SHIFT);
    const bucket = buckets.get(key) ?? { count: 0, r: 0, g: 0, b: 0 };
    bucket.count += 1;
    bucket.r += r;
    bucket.g += g;
    bucket.b += b;
    buckets.set(key, bucket);
  }
  // Neighbouring buckets often carry the same colour name: merge by name so the palette has distinct words.
  const byName = new Map<string, { count: number; r: number; g: number; b: number }>();
  for (const bucket of buckets.values()) {
    const name = colourName(bucket.r / bucket.count, bucket.g / bucket.count, bucket.b / bucket.count);
    const merged = byName.get(name) ?? { count: 0, r: 0, g: 0, b: 0 };
    merged.count += bucket.count;
    merged.r += bucket.r;
    merged.g += bucket.g;
    merged.b += bucket.b;
    byName.set(name, merged);
  }
  return [...byName.entries()]
    .sort((a, b) => b[1].count - a[1].count)
    .slice(0, PALETTE_SIZE)
    .map(([name, bucket]) => ({
      name,
      hex: hexOf(bucket.r / bucket.count, bucket.g / bucket.count, bucket.b / bucket.count),
      share: Math.round((bucket.count / pixels) * 1000) / 1000,
    }));
}

function brightnessWord(brightness: number): string {
  return brightness < 0.2
    ? 'very dark'
    : brightness < 0.4
      ? 'dark'
      : brightness < 0.6
        ? 'medium brightness'
        : brightness < 0.8
          ? 'fairly bright'
          : 'very bright';
}

function detailWord(entropy: number): string {
  return entropy < 2 ? 'almost flat' : entropy < 5 ? 'low detail' : entropy < 7 ? 'moderate detail' : 'high detail';
}

function shapeWord(width: number, height: number): string {
  const ratio = width / height;
  return ratio > 1.05 ? 'landscape' : ratio < 0.95 ? 'portrait' : 'square';
}

function describe(facts: Omit<ImageFacts, 'description'>): string {
  const [first, ...rest] = facts.palette;
  const tones = rest.filter((colour) => colour.share >= 0.05).map((colour) => colour.name);
  const colours = first
    ? `mostly ${first.name}${tones.length > 0 ? ` with ${tones.join(' and ')} tones` : ''}`
    : 'no measurable colours';
  const parts = [
    `${facts.width}×${facts.height} ${facts.format.toUpperCase()} (${shapeWord(facts.width, facts.height)})`,
    facts.isOpaque ? 'opaque' : 'with transparent areas',
    `${brightnessWord(facts.brightness)} (${facts.brightness.toFixed(2)})`,
    colours,
    `${detailWord(facts.entropy)} (entropy ${facts.entropy.toFixed(1)})`,
  ];
  const camera = [facts.exif?.make, facts.exif?.model].filter(Boolean).join(' ');
  if (camera) {
    parts.push(`taken with ${camera}${facts.exif?.takenAt ? ` on ${facts.exif.takenAt.slice(0, 10)}` : ''}`);
  } else if (facts.exif?.software) {
    parts.push(`made with ${facts.exif.software}`);
  }
  return `${parts.join(', ')}.`;
}

export async function analyseImage(bytes: Uint8Array): Promise<ImageFacts> {
  const sniffed = await fileTypeFromBuffer(bytes);
  const image = sharp(bytes, { failOn: 'error', limitInputPixels: MAX_INPUT_PIXELS });
  let metadata: Metadata;
  let stats: Stats;
  try {
    metadata = await image.metadata();
    stats = await image.stats();
  } catch (error) {
    if (isPixelLimitError(error)) {
      throw inputPixelsError('image_url');
    }
    throw new ApiError(
      422,
      `The image could not be decoded${sniffed ? ` (${sniffed.mime})` : ''}: ${(error as Error).message}`,
      { param: 'image_url', code: 'invalid_image', cause: error },
    );
  }
  const red = stats.channels[0]!; // a decoded image has at least one channel
  const [, green, blue] = stats.channels;
  const mean = (channel: ChannelStats | undefined, fallback: ChannelStats) => (channel ?? fallback).mean;
  const brightness = (0.2126 * mean(red, red) + 0.7152 * mean(green, red) + 0.0722 * mean(blue, red)) / 255;
  const palette = await paletteOf(image);
  const dominantRgb = stats.dominant;
  const facts: Omit<ImageFacts, 'description'> = {
    mediaType: sniffed?.mime ?? `image/${metadata.format ?? 'unknown'}`,
    format: metadata.format ?? 'unknown',
    width: metadata.width ?? 0,
    height: metadata.height ?? 0,
    channels: metadata.channels ?? stats.channels.length,
    hasAlpha: metadata.hasAlpha ?? false,
    isOpaque: stats.isOpaque,
    brightness: Math.round(brightness * 1000) / 1000,
    entropy: Math.round(stats.entropy * 100) / 100,
    dominant: palette[0] ?? {
      name: colourName(dominantRgb.r, dominantRgb.g, dominantRgb.b),
      hex: hexOf(dominantRgb.r, dominantRgb.g, dominantRgb.b),
      share: 0,
    },
    palette,
    exif: await readExif(bytes),
  };
  return { ...facts, description: describe(facts) };
}
