/**
 * Real media for fake upstreams to answer with, made here by the engines the project ships: images by sharp,
 * audio by the ffmpeg binary of `@ffmpeg-installer` (a sine tone of a given length). Tests decode what the
 * adapters return, so the samples must be real files, not magic bytes.
 */
import { execFile } from 'node:child_process';
import ffmpeg from '@ffmpeg-installer/ffmpeg';
import sharp from 'sharp';

export type SampleImageFormat = 'png' | 'jpeg' | 'webp' | 'gif';

export async function sampleImage(format: SampleImageFormat, width: number, height: number): Promise<Uint8Array> {
  const image = sharp({ create: { width, height, channels: 3, background: { r: 200, g: 80, b: 20 } } });
  return new Uint8Array(await image.toFormat(format).toBuffer());
}

/** ffmpeg muxer arguments per format; `pcm` is OpenAI's raw 24 kHz 16-bit mono. */
const AUDIO_ARGUMENTS = {
  mp3: ['-c:a', 'libmp3lame', '-b:a', '64k', '-f', 'mp3'],
  opus: ['-c:a', 'libopus', '-b:a', '32k', '-f', 'ogg'],
  aac: ['-c:a', 'aac', '-b:a', '64k', '-f', 'adts'],
  flac: ['-c:a', 'flac', '-f', 'flac'],
  wav: ['-c:a', 'pcm_s16le', '-f', 'wav'],
  pcm: ['-c:a', 'pcm_s16le', '-f', 's16le'],
} as const;

export type SampleAudioFormat = keyof typeof AUDIO_ARGUMENTS;

export function sampleAudio(format: SampleAudioFormat, seconds: number): Promise<Uint8Array> {
  const args = ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=24000:duration=${seconds}`, '-ac', '1', '-ar', format === 'opus' ? '48000' : '24000', ...AUDIO_ARGUMENTS[format], 'pipe:1'];
  return new Promise((resolve, reject) => {
    execFile(ffmpeg.path, args, { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 }, (error, stdout) => {
      if (error) {
        reject(error);
      } else {
        resolve(new Uint8Array(stdout));
      }
    });
  });
}
