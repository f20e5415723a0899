/**
 * PCM → the audio file a caller asked for. WAV is written in JS; the compressed formats are encoded by the
 * static ffmpeg binary from `@ffmpeg-installer` as a child process, killed when `signal` fires.
 *
 * PLACEHOLDER until the speech work lands: only `wav` is produced here.
 */
import { ApiError } from '../../core/api-error.js';
import type { GeneratedMedia } from '../../core/models.js';
import type { MediaSlot } from '../media-pool.js';
import type { Pcm } from './pcm.js';
import { wavFile } from './wav.js';

export const AUDIO_MEDIA_TYPES = {
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
} as const;

export type AudioFormat = keyof typeof AUDIO_MEDIA_TYPES;

/** Runs under the generation's slot: ffmpeg is killed by `slot.signal`, a pure-JS encoder runs on `slot.run`. */
export async function encodeAudio(pcm: Pcm, format: AudioFormat, slot: MediaSlot): Promise<GeneratedMedia> {
  slot.signal.throwIfAborted();
  if (format === 'wav') {
    return { data: wavFile(pcm), mediaType: AUDIO_MEDIA_TYPES.wav };
  }
  throw new ApiError(400, `response_format '${format}' is not available yet`, { param: 'response_format' });
}
