import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { medianPitchHz } from '../../../test/helpers/estimate-pitch.js';
import { durationOf } from '../audio/pcm.js';
import { FLITE_VOICES, synthesizeWithFlite, type FliteInput } from './flite.js';

const SENTENCE = 'The quick brown fox jumps over the lazy dog near the riverbank.';
const speak = (overrides: Partial<FliteInput> = {}) =>
  synthesizeWithFlite({ text: SENTENCE, voice: 'slt', speed: 1, pitch: 0, volume: 1, ...overrides });
const peak = (samples: Int16Array) => samples.reduce((max, value) => Math.max(max, Math.abs(value)), 0);

describe('Flite', () => {
  it.each(Object.keys(FLITE_VOICES))(
    'speaks with voice %s: 16 kHz mono, about 3–5 s for the sentence',
    async (voice) => {
      const pcm = await speak({ voice });
      expect(pcm.sampleRate).toBe(16_000);
      expect(pcm.channels).toBe(1);
      expect(durationOf(pcm)).toBeGreaterThan(2.5);
      expect(durationOf(pcm)).toBeLessThan(6);
      expect(peak(pcm.samples)).toBeGreaterThan(3_000);
    },
  );

  it('gives the same samples for the same input', async () => {
    const hash = async () =>
      createHash('sha256')
        .update((await speak()).samples)
        .digest('hex');
    expect(await hash()).toBe(await hash());
  });

  it('survives many runs in one thread (node:wasi crashed the process here)', async () => {
    for (let run = 0; run < 12; run += 1) {
      expect(durationOf(await speak({ text: `Run number ${run}.` }))).toBeGreaterThan(0.5);
    }
  });

  it.each([
    [2, 0.4, 0.6],
    [0.5, 1.8, 2.2],
    [4, 0.2, 0.32],
    [0.25, 3.6, 4.4],
  ])('speed %d scales the duration by about 1/speed', async (speed, low, high) => {
    const normal = durationOf(await speak());
    const ratio = durationOf(await speak({ speed })) / normal;
    expect(ratio).toBeGreaterThan(low);
    expect(ratio).toBeLessThan(high);
  });

  it('volume 0.5 halves the peak; volume 10 is limited, never wrapped around', async () => {
    const normal = await speak();
    const quiet = await speak({ volume: 0.5 });
    expect(peak(quiet.samples) / peak(normal.samples)).toBeCloseTo(0.5, 1);
    const loud = await speak({ volume: 10 });
    expect(peak(loud.samples)).toBeLessThanOrEqual(32_767);
    expect(peak(loud.samples)).toBeGreaterThan(peak(normal.samples));
    // A wrapped sample changes sign; a limited one keeps it.
    const flipped = loud.samples.filter((value, i) => value * normal.samples[i] < 0).length;
    expect(flipped).toBe(0);
  });

  it.each(['slt', 'awb', 'kal16', 'rms'])(
    'pitch +7 raises %s by about a fifth and -5 lowers it, keeping the length',
    async (voice) => {
      const normal = await speak({ voice });
      const base = medianPitchHz(normal.samples, 16_000);
      for (const semitones of [7, -5]) {
        const shifted = await speak({ voice, pitch: semitones });
        const ratio = medianPitchHz(shifted.samples, 16_000) / base;
        expect(Math.log2(ratio) * 12).toBeGreaterThan(semitones - 2);
        expect(Math.log2(ratio) * 12).toBeLessThan(semitones + 2);
        expect(durationOf(shifted) / durationOf(normal)).toBeGreaterThan(0.85);
        expect(durationOf(shifted) / durationOf(normal)).toBeLessThan(1.15);
      }
    },
  );

  it('refuses a voice it does not have with a 400 on voice', async () => {
    await expect(speak({ voice: 'kal' + 'x' })).rejects.toMatchObject({ status: 400, param: 'voice' });
  });
});
