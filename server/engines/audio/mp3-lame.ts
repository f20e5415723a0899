/**
 * MP3 in pure JS with `@breezystack/lamejs` (LGPL-3.0, LAME's own code), for platforms where the ffmpeg
 * binary is missing. About 10× slower than ffmpeg and CPU-bound, so it runs as the media pool's `mp3` job.
 */
import lamejs from '@breezystack/lamejs';
import type { Pcm } from './pcm.js';

/** LAME takes 1152-sample frames; bigger blocks only save calls. */
const BLOCK = 1152 * 16;

export function encodeMp3WithLame(pcm: Pcm, kbps: number): Uint8Array {
  const encoder = new lamejs.Mp3Encoder(pcm.channels, pcm.sampleRate, kbps);
  const parts: Uint8Array[] = [];
  const frames = pcm.samples.length / pcm.channels;
  let left = pcm.samples;
  let right: Int16Array | undefined;
  if (pcm.channels === 2) {
    left = new Int16Array(frames);
    right = new Int16Array(frames);
    for (let i = 0; i < frames; i += 1) {
      // Interleaved whole frames: 2 * i + 1 < samples.length.
      left[i] = pcm.samples[2 * i]!;
      right[i] = pcm.samples[2 * i + 1]!;
    }
  }
  for (let start = 0; start < frames; start += BLOCK) {
    const end = Math.min(frames, start + BLOCK);
    parts.push(encoder.encodeBuffer(left.subarray(start, end), right?.subarray(start, end)));
  }
  parts.push(encoder.flush());
  const total = parts.reduce((sum, part) => sum + part.length, 0);
  const file = new Uint8Array(total);
  let offset = 0;
  for (const part of parts) {
    file.set(part, offset);
    offset += part.length;
  }
  return file;
}
