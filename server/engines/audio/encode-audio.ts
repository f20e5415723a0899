/**
 * PCM → the audio file a caller asked for. `wav` and `pcm` are written in JS; mp3, opus (Ogg), aac (ADTS) and
 * flac are encoded by the static ffmpeg binary of `@ffmpeg-installer` as a child process (ffmpeg-process.ts),
 * killed when the generation's signal fires. Where that binary does not exist for the platform, mp3 falls
 * back to LAME in JS (the pool's `mp3` job) and the other compressed formats are refused with a 400 naming the
 * ones that can be produced.
 */
import { ApiError } from '../../core/api-error.js';
import type { GeneratedMedia } from '../../core/models.js';
import type { MediaSlot } from '../media-pool.js';
import { ffmpegPath, runFfmpeg } from './ffmpeg-process.js';
import { durationOf, type Pcm } from './pcm.js';
import { downmixToMono, resampleMono } from './resample-pcm.js';
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

/** OpenAI's `pcm`: raw signed 16-bit little-endian mono at 24 kHz. */
export const PCM_OUTPUT_RATE = 24_000;

export interface EncodeOptions {
  /** The ffmpeg binary; `null` behaves as a platform without one (tests). Default: `@ffmpeg-installer`'s. */
  ffmpeg?: string | null;
}

/** What can be produced here, and by what. */
export function audioEncoders(options: EncodeOptions = {}): { ffmpeg: string | undefined; formats: AudioFormat[] } {
  const ffmpeg = options.ffmpeg === null ? undefined : (options.ffmpeg ?? ffmpegPath());
  return { ffmpeg, formats: ffmpeg ? ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] : ['mp3', 'wav', 'pcm'] };
}

/** Bit rates for speech (mono) and music (stereo): transparent enough for each, small for the wire. */
const KBPS = { mp3: [64, 160], opus: [32, 96], aac: [64, 128] } as const;
/** libopus takes only these input rates; anything else (22.05 kHz eSpeak, 44.1 kHz music) is resampled. */
const OPUS_RATES = new Set([8_000, 12_000, 16_000, 24_000, 48_000]);

function codecArgs(format: Exclude<AudioFormat, 'wav'>, pcm: Pcm): string[] {
  const stereo = pcm.channels === 2 ? 1 : 0;
  switch (format) {
    case 'mp3':
      return ['-c:a', 'libmp3lame', '-b:a', `${KBPS.mp3[stereo]}k`, '-f', 'mp3'];
    case 'opus':
      // Complexity 5 instead of the default 10: 2.5× faster, no audible loss for speech.
      return [
        ...(OPUS_RATES.has(pcm.sampleRate) ? [] : ['-ar', '48000']),
        '-c:a',
        'libopus',
        '-b:a',
        `${KBPS.opus[stereo]}k`,
        '-compression_level',
        '5',
        '-f',
        'ogg',
      ];
    case 'aac':
      // ADTS: an MP4 container cannot be written to a pipe without fragmenting it.
      return ['-c:a', 'aac', '-b:a', `${KBPS.aac[stereo]}k`, '-f', 'adts'];
    case 'flac':
      return ['-c:a', 'flac', '-f', 'flac'];
    case 'pcm':
      return ['-ar', String(PCM_OUTPUT_RATE), '-ac', '1', '-f', 's16le'];
  }
}

/** Runs under the generation's slot: ffmpeg is killed by `slot.signal`, a pure-JS encoder runs on `slot.run`. */
export async function encodeAudio(
  pcm: Pcm,
  format: AudioFormat,
  slot: MediaSlot,
  options: EncodeOptions = {},
): Promise<GeneratedMedia> {
  slot.signal.throwIfAborted();
  const media = (data: Uint8Array): GeneratedMedia => ({ data, mediaType: AUDIO_MEDIA_TYPES[format] });
  if (format === 'wav') {
    return media(wavFile(pcm));
  }
  const { ffmpeg, formats } = audioEncoders(options);
  if (!ffmpeg) {
    if (format === 'pcm') {
      const samples = resampleMono(downmixToMono(pcm), pcm.sampleRate, PCM_OUTPUT_RATE);
      return media(new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength));
    }
    if (format === 'mp3') {
      const { mp3 } = await slot.run('mp3', { pcm, kbps: KBPS.mp3[pcm.channels === 2 ? 1 : 0] });
      return media(mp3);
    }
    throw new ApiError(
      400,
      `response_format '${format}' cannot be produced here: no ffmpeg binary exists for this platform. Available: ${formats.join(', ')}.`,
      {
        param: 'response_format',
        code: 'unsupported_format',
      },
    );
  }
  const input = new Uint8Array(pcm.samples.buffer, pcm.samples.byteOffset, pcm.samples.byteLength);
  const args = [
    '-f',
    's16le',
    '-ar',
    String(pcm.sampleRate),
    '-ac',
    String(pcm.channels),
    '-i',
    'pipe:0',
    ...codecArgs(format, pcm),
    'pipe:1',
  ];
  let data: Uint8Array;
  try {
    data = await runFfmpeg(ffmpeg, args, input, slot.signal);
  } catch (error) {
    if (slot.signal.aborted) {
      throw slot.signal.reason;
    }
    throw new ApiError(
      500,
      `The audio encoder failed for ${format}: ${error instanceof Error ? error.message : String(error)}`,
      { code: 'encoder_failed', cause: error },
    );
  }
  if (format === 'flac') {
    writeFlacTotalSamples(data, Math.round(durationOf(pcm) * pcm.sampleRate));
  }
  return media(data);
}

/**
 * ffmpeg writing FLAC to a pipe cannot seek back to fill in STREAMINFO's total sample count, so players and
 * probes see an unknown duration. We know the count: it goes in the 36 bits after the sample rate (20 bits),
 * channels (3) and bits per sample (5), i.e. from the low nibble of byte 21 (the block starts at byte 8).
 */
function writeFlacTotalSamples(file: Uint8Array, frames: number): void {
  const isStreamInfo =
    file.length >= 42 &&
    file[0] === 0x66 &&
    file[1] === 0x4c &&
    file[2] === 0x61 &&
    file[3] === 0x43 &&
    (file[4]! & 0x7f) === 0; // length ≥ 42 above
  if (!isStreamInfo) {
    return;
  }
  file[21] = (file[21]! & 0xf0) | (Math.floor(frames / 2 ** 32) & 0x0f);
  new DataView(file.buffer, file.byteOffset).setUint32(22, frames >>> 0, false);
}
