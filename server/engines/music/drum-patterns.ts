/**
 * One bar of General MIDI drums per genre, in sixteenth-note steps (0–15), at three intensities: the intro is
 * sparse, the verse holds back, the chorus is full. A fill closes each section so the form is audible.
 */
import type { Genre } from './music-words.js';
import type { SeededRandom as Random } from '../seeded-random.js';

/** GM percussion keys (channel 10). */
export const DRUM = {
  kick: 36,
  sideStick: 37,
  snare: 38,
  clap: 39,
  closedHat: 42,
  pedalHat: 44,
  lowTom: 45,
  openHat: 46,
  highTom: 50,
  crash: 49,
  ride: 51,
  tambourine: 54,
  shaker: 70,
} as const;

export type Intensity = 'intro' | 'verse' | 'chorus';

export interface DrumHit {
  /** Sixteenth-note step within the bar. */
  step: number;
  key: number;
  velocity: number;
}

type Pattern = Partial<Record<keyof typeof DRUM, number[]>>;

const EIGHTHS = [0, 2, 4, 6, 8, 10, 12, 14];
const SIXTEENTHS = Array.from({ length: 16 }, (_, step) => step);

const PATTERNS: Record<Genre, Record<Intensity, Pattern>> = {
  pop: {
    intro: { closedHat: EIGHTHS },
    verse: { kick: [0, 8], snare: [4, 12], closedHat: EIGHTHS },
    chorus: { kick: [0, 6, 8], snare: [4, 12], closedHat: EIGHTHS, tambourine: [4, 12] },
  },
  rock: {
    intro: { kick: [0, 8], closedHat: EIGHTHS },
    verse: { kick: [0, 8, 10], snare: [4, 12], closedHat: EIGHTHS },
    chorus: { kick: [0, 6, 8, 10], snare: [4, 12], openHat: EIGHTHS },
  },
  edm: {
    intro: { kick: [0, 4, 8, 12] },
    verse: { kick: [0, 4, 8, 12], clap: [4, 12], openHat: [2, 6, 10, 14] },
    chorus: { kick: [0, 4, 8, 12], clap: [4, 12], openHat: [2, 6, 10, 14], closedHat: SIXTEENTHS },
  },
  lofi: {
    intro: { closedHat: EIGHTHS },
    verse: { kick: [0, 7, 10], snare: [4, 12], closedHat: EIGHTHS },
    chorus: { kick: [0, 7, 10], snare: [4, 12], closedHat: EIGHTHS, shaker: [2, 6, 10, 14] },
  },
  hiphop: {
    intro: { closedHat: EIGHTHS },
    verse: { kick: [0, 3, 10], snare: [4, 12], closedHat: EIGHTHS },
    chorus: { kick: [0, 3, 8, 10], snare: [4, 12], clap: [4, 12], closedHat: SIXTEENTHS },
  },
  jazz: {
    // The swing itself comes from the composer delaying off-beats; steps here are straight.
    intro: { ride: [0, 4, 8, 12] },
    verse: { ride: [0, 4, 6, 8, 12, 14], pedalHat: [4, 12], kick: [0] },
    chorus: { ride: [0, 4, 6, 8, 12, 14], pedalHat: [4, 12], kick: [0, 10], sideStick: [12] },
  },
  folk: {
    intro: { shaker: EIGHTHS },
    verse: { kick: [0, 8], sideStick: [4, 12], shaker: EIGHTHS },
    chorus: { kick: [0, 8, 10], snare: [4, 12], tambourine: EIGHTHS },
  },
  classical: {
    intro: {},
    verse: {},
    chorus: { lowTom: [0], highTom: [8] },
  },
  cinematic: {
    intro: { lowTom: [0] },
    verse: { kick: [0, 8], lowTom: [0, 10] },
    chorus: { kick: [0, 6, 8], snare: [4, 12], lowTom: [0, 3, 10], highTom: [14] },
  },
  ambient: {
    intro: {},
    verse: { shaker: [4, 12] },
    chorus: { kick: [0], shaker: EIGHTHS },
  },
};

/** Accents: the downbeat loudest, backbeats next, sixteenths between beats softest. */
function accent(step: number): number {
  return step % 16 === 0 ? 1 : step % 4 === 0 ? 0.9 : step % 2 === 0 ? 0.78 : 0.66;
}

export function drumBar(
  genre: Genre,
  intensity: Intensity,
  options: { fill: boolean; crash: boolean },
  random: Random,
): DrumHit[] {
  const pattern = PATTERNS[genre][intensity];
  const hits: DrumHit[] = [];
  const base = intensity === 'chorus' ? 112 : intensity === 'verse' ? 98 : 84;
  for (const [name, steps] of Object.entries(pattern) as [keyof typeof DRUM, number[]][]) {
    for (const step of steps) {
      if (options.fill && step >= 12 && name !== 'kick') {
        continue;
      }
      const cymbal =
        name === 'closedHat' || name === 'openHat' || name === 'ride' || name === 'shaker' || name === 'tambourine';
      const velocity = base * accent(step) * (cymbal ? 0.72 : 1) + random.below(9) - 4;
      hits.push({ step, key: DRUM[name], velocity: Math.round(Math.min(127, Math.max(20, velocity))) });
    }
  }
  if (options.fill && genre !== 'classical' && genre !== 'ambient') {
    // The last beat of a section: a snare/tom run that rises into the next one.
    const voices = random.chance(0.5)
      ? [DRUM.snare, DRUM.snare, DRUM.highTom, DRUM.lowTom]
      : [DRUM.highTom, DRUM.highTom, DRUM.lowTom, DRUM.lowTom];
    voices.forEach((key, index) => hits.push({ step: 12 + index, key, velocity: 78 + index * 10 + random.below(6) }));
  }
  if (options.crash && genre !== 'ambient') {
    hits.push({ step: 0, key: genre === 'classical' ? DRUM.lowTom : DRUM.crash, velocity: 104 });
  }
  return hits;
}
