/**
 * What every drawing step of a scene shares: the size, the horizon, the random source, the sky's palette, the
 * prompt's reading, and the `<defs>` the steps add gradients to. Also the number format of the SVG, which
 * keeps the text short and the same everywhere.
 */
import { mixColours } from './colour-mix.js';
import type { PromptReading, SkyTheme } from './prompt-words.js';
import type { SeededRandom } from '../seeded-random.js';

export interface SkyPalette {
  /** The sky gradient, top to bottom. */
  stops: [string, string, string];
  /** How lit the land is: 1 in daylight, low at night; the land is mixed towards `shade` by the rest. */
  light: number;
  shade: string;
  /** The sun's or moon's disc, and its glow. */
  body: string;
  glow: string;
}

export const SKY_PALETTES: Record<SkyTheme, SkyPalette> = {
  day: { stops: ['#2f7fd8', '#7db9ee', '#d4ecff'], light: 1, shade: '#0b1a33', body: '#fff4b8', glow: '#fffbe0' },
  dawn: { stops: ['#5767c2', '#ee9e8e', '#ffe0b0'], light: 0.85, shade: '#2a2250', body: '#ffe2a8', glow: '#ffd9b0' },
  sunset: { stops: ['#2d1655', '#a8305a', '#ff8c42'], light: 0.62, shade: '#2a0f2e', body: '#ffd25e', glow: '#ffb060' },
  storm: { stops: ['#1e232b', '#3c4450', '#6a7380'], light: 0.5, shade: '#10141a', body: '#d8dde3', glow: '#9aa3ad' },
  night: { stops: ['#02041a', '#0c1338', '#252e5c'], light: 0.26, shade: '#03040e', body: '#f2f0e2', glow: '#9fb0e0' },
  fire: { stops: ['#1a0300', '#7a1400', '#ee5f10'], light: 0.45, shade: '#1a0200', body: '#ffcf4a', glow: '#ff7a1a' },
  space: { stops: ['#000004', '#060720', '#150b36'], light: 0.3, shade: '#000004', body: '#f2f0e2', glow: '#6a5acd' },
};

/** What a drawn scene is laid out on, still or moving (the video engine's `Stage` shares it). */
export interface SceneLayout {
  width: number;
  height: number;
  /** The shorter side: every size and thickness is a fraction of it, so a scene looks alike at every size. */
  unit: number;
  /** Where the sky meets the land (pixels from the top); the full height when there is no land. */
  horizon: number;
  random: SeededRandom;
  palette: SkyPalette;
  reading: PromptReading;
}

export interface SceneCanvas extends SceneLayout {
  defs: string[];
  /** A land colour as the sky lights it. */
  lit(colour: string): string;
  /** The accent colours named in the prompt, or the given defaults when none were. */
  accentsOr(defaults: readonly string[]): readonly string[];
}

/** One decimal place: plenty at these sizes, and the SVG stays small. */
export function num(value: number): string {
  return String(Math.round(value * 10) / 10);
}

export function createCanvas(
  width: number,
  height: number,
  random: SeededRandom,
  reading: PromptReading,
  horizonFraction: number | null,
): SceneCanvas {
  const palette = SKY_PALETTES[reading.sky];
  return {
    width,
    height,
    unit: Math.min(width, height),
    horizon: horizonFraction === null ? height : height * horizonFraction,
    random,
    palette,
    reading,
    defs: [],
    lit: (colour) => mixColours(colour, palette.shade, 1 - palette.light),
    accentsOr: (defaults) => (reading.accents.length > 0 ? reading.accents : defaults),
  };
}
