/**
 * Mono at another sample rate, in JS: the fallback for OpenAI's `pcm` (24 kHz mono) when no ffmpeg binary is
 * there, and the speech engine's pitch shift by resampling. Linear interpolation: cheap enough to run on any
 * thread for minutes of audio, and speech from these engines has little energy near the band edge, where its
 * imaging would be heard.
 */
import type { Pcm } from './pcm.js';

export function downmixToMono(pcm: Pcm): Int16Array {
  if (pcm.channels === 1) {
    return pcm.samples;
  }
  const frames = pcm.samples.length / 2;
  const mono = new Int16Array(frames);
  for (let i = 0; i < frames; i += 1) {
    mono[i] = (pcm.samples[2 * i]! + pcm.samples[2 * i + 1]!) >> 1; // interleaved whole frames
  }
  return mono;
}

/** `samples` taken as `fromRate` Hz, returned at `toRate` Hz (same duration, so pitch is kept). */
export function resampleMono(samples: Int16Array, fromRate: number, toRate: number): Int16Array {
  if (fromRate === toRate || samples.length === 0) {
    return samples;
  }
  const length = Math.max(1, Math.round((samples.length * toRate) / fromRate));
  const out = new Int16Array(length);
  const step = fromRate / toRate;
  const last = samples.length - 1;
  for (let i = 0; i < length; i += 1) {
    const position = i * step;
    const index = Math.floor(position);
    if (index >= last) {
      out[i] = samples[last]!; // samples is not empty
    } else {
      const fraction = position - index;
      out[i] = Math.round(samples[index]! + (samples[index + 1]! - samples[index]!) * fraction); // index < last
    }
  }
  return out;
}
