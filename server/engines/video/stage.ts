/**
 * What every animated layer of a video shares, fixed once per video: the size, the horizon, the seeded random
 * source (used only while layers are built, never per frame, so a frame depends on its time alone), the sky's
 * palette from the image engine, the prompt's reading, the sky's colour per row, and the camera's slow pan.
 */
import { mixColours } from '../image/colour-mix.js';
import type { PromptReading } from '../image/prompt-words.js';
import { SKY_PALETTES, type SceneLayout } from '../image/scene-canvas.js';
import type { SeededRandom } from '../seeded-random.js';
import { mixPacked, packHex, type PixelFrame } from './pixel-frame.js';

export interface Stage extends SceneLayout {
  /** The sky's packed colour on each row (three-stop gradient). */
  skyRows: Uint32Array;
  /** How far (pixels) the camera has panned at `t` seconds, for a layer at `depth` (0 far … 1 near): parallax. */
  pan(t: number, depth: number): number;
  /** Longest pan of the video at depth 1, so layers can build wide enough scenery. */
  maxPan: number;
  /** A land colour as the sky lights it, packed. */
  lit(hex: string): number;
  accentsOr(defaults: readonly string[]): readonly string[];
}

/** A layer draws itself over the frame at time `t` (seconds). */
export type PaintLayer = (frame: PixelFrame, t: number) => void;

export function createStage(
  width: number,
  height: number,
  seconds: number,
  random: SeededRandom,
  reading: PromptReading,
  horizonFraction: number | null,
): Stage {
  const palette = SKY_PALETTES[reading.sky];
  const unit = Math.min(width, height);
  const stops = palette.stops.map(packHex);
  const skyRows = new Uint32Array(height);
  for (let y = 0; y < height; y++) {
    const along = y / Math.max(1, height - 1);
    skyRows[y] =
      // Every sky palette has three stops.
      along < 0.5 ? mixPacked(stops[0]!, stops[1]!, along * 2) : mixPacked(stops[1]!, stops[2]!, (along - 0.5) * 2);
  }
  // A slow drift sideways: about a twentieth of the picture over ten seconds, whichever way the seed says.
  const direction = random.chance(0.5) ? 1 : -1;
  const speed = unit * random.between(0.006, 0.012);
  return {
    width,
    height,
    unit,
    horizon: horizonFraction === null ? height : Math.round(height * horizonFraction),
    random,
    palette,
    reading,
    skyRows,
    pan: (t, depth) => direction * speed * t * depth,
    maxPan: speed * seconds,
    lit: (hex) => packHex(mixColours(hex, palette.shade, 1 - palette.light)),
    accentsOr: (defaults) => (reading.accents.length > 0 ? reading.accents : defaults),
  };
}

/** `value` wrapped into `[0, period)`, for things that leave one side and come back on the other. */
export function wrap(value: number, period: number): number {
  return ((value % period) + period) % period;
}

/**
 * A triangle wave in [0, 1] with period 1: a cheap, smooth-enough stand-in for a sine where many things
 * twinkle or bob every frame.
 */
export function triangle(phase: number): number {
  const fraction = phase - Math.floor(phase);
  return fraction < 0.5 ? fraction * 2 : 2 - fraction * 2;
}
