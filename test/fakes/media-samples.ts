/**
 * Real media for fake upstreams to answer with, made here by the engines the project ships: images by sharp,
 * audio and video by the ffmpeg binary of `@ffmpeg-installer` (a sine tone, a test pattern, of a given length). Tests decode what the
 * adapters return, so the samples must be real files, not magic bytes.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
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
  webm: ['-c:a', 'libopus', '-b:a', '32k', '-f', 'webm'],
  /** M4A (AAC in MP4); its index is written at the end, so only with `toFile`. */
  m4a: ['-c:a', 'aac', '-b:a', '64k', '-f', 'ipod'],
} as const;

export type SampleAudioFormat = keyof typeof AUDIO_ARGUMENTS;

/**
 * Written to a pipe, as servers that stream their encoder's output do; `toFile` writes a seekable file
 * instead, where ffmpeg goes back to fill in totals (FLAC's STREAMINFO sample count, WAV's sizes).
 */
export async function sampleAudio(format: SampleAudioFormat, seconds: number, toFile = false): Promise<Uint8Array> {
  if (toFile) {
    const directory = await mkdtemp(path.join(tmpdir(), 'omnigate-sample-'));
    const file = path.join(directory, `sample.${format}`);
    try {
      await runFfmpeg(audioArguments(format, seconds, file));
      return new Uint8Array(await readFile(file));
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  }
  return runFfmpeg(audioArguments(format, seconds, 'pipe:1'));
}

/** An H.264 MP4 of ffmpeg's test pattern, `moov` first (written to a file: faststart rewrites it). */
export async function sampleVideo(seconds: number, width = 64, height = 48): Promise<Uint8Array> {
  const directory = await mkdtemp(path.join(tmpdir(), 'omnigate-sample-'));
  const file = path.join(directory, 'sample.mp4');
  try {
    const pattern = `testsrc=size=${width}x${height}:rate=8:duration=${seconds}`;
    await runFfmpeg([
      '-hide_banner',
      '-loglevel',
      'error',
      '-f',
      'lavfi',
      '-i',
      pattern,
      '-c:v',
      'libx264',
      '-pix_fmt',
      'yuv420p',
      '-movflags',
      '+faststart',
      file,
    ]);
    return new Uint8Array(await readFile(file));
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

function audioArguments(format: SampleAudioFormat, seconds: number, output: string): string[] {
  return [
    '-hide_banner',
    '-loglevel',
    'error',
    '-f',
    'lavfi',
    '-i',
    `sine=frequency=440:sample_rate=24000:duration=${seconds}`,
    '-ac',
    '1',
    '-ar',
    format === 'opus' ? '48000' : '24000',
    ...AUDIO_ARGUMENTS[format],
    output,
  ];
}

function runFfmpeg(args: string[]): Promise<Uint8Array> {
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
