/**
 * Decodes what a media answer holds instead of counting its bytes: PNG/JPEG/WebP dimensions from their headers,
 * WAV from its RIFF header, and any audio through the ffmpeg binary the server itself ships (`-i` decodes the
 * whole stream to nowhere and reports duration, codec and sample rate).
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const ffmpegPath = (createRequire(import.meta.url)('@ffmpeg-installer/ffmpeg') as { path: string }).path;
const run = promisify(execFile);

export function pngSize(bytes: Uint8Array): { width: number; height: number } {
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const buffer = Buffer.from(bytes);
  if (!buffer.subarray(0, 8).equals(signature) || buffer.toString('latin1', 12, 16) !== 'IHDR') {
    throw new Error('not a PNG');
  }
  return { width: buffer.readUInt32BE(16), height: buffer.readUInt32BE(20) };
}

export function imageKind(bytes: Uint8Array): 'png' | 'jpeg' | 'webp' | 'unknown' {
  const buffer = Buffer.from(bytes);
  if (buffer[0] === 0x89 && buffer.toString('latin1', 1, 4) === 'PNG') {
    return 'png';
  }
  if (buffer[0] === 0xff && buffer[1] === 0xd8 && buffer[2] === 0xff) {
    return 'jpeg';
  }
  if (buffer.toString('latin1', 0, 4) === 'RIFF' && buffer.toString('latin1', 8, 12) === 'WEBP') {
    return 'webp';
  }
  return 'unknown';
}

export interface WavInfo {
  channels: number;
  sampleRate: number;
  bitsPerSample: number;
  seconds: number;
}

export function wavInfo(bytes: Uint8Array): WavInfo {
  const buffer = Buffer.from(bytes);
  if (buffer.toString('latin1', 0, 4) !== 'RIFF' || buffer.toString('latin1', 8, 12) !== 'WAVE') {
    throw new Error('not a WAV file');
  }
  let offset = 12;
  let format: Omit<WavInfo, 'seconds'> | undefined;
  while (offset + 8 <= buffer.length) {
    const id = buffer.toString('latin1', offset, offset + 4);
    const size = buffer.readUInt32LE(offset + 4);
    if (id === 'fmt ') {
      format = { channels: buffer.readUInt16LE(offset + 10), sampleRate: buffer.readUInt32LE(offset + 12), bitsPerSample: buffer.readUInt16LE(offset + 22) };
    } else if (id === 'data' && format) {
      if (offset + 8 + size !== buffer.length) {
        throw new Error(`WAV data size ${size} does not match the file`);
      }
      return { ...format, seconds: size / (format.channels * (format.bitsPerSample / 8)) / format.sampleRate };
    }
    offset += 8 + size + (size % 2);
  }
  throw new Error('WAV without fmt/data chunks');
}

export interface AudioProbe {
  seconds: number;
  codec: string;
  sampleRate: number;
}

/** Decodes the whole file with ffmpeg; throws when ffmpeg cannot. `rawPcm` reads bytes as s16le mono 24 kHz. */
export async function probeAudio(bytes: Uint8Array, options: { rawPcm?: boolean } = {}): Promise<AudioProbe> {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'omnigate-probe-')), 'audio');
  writeFileSync(file, bytes);
  const input = options.rawPcm ? ['-f', 's16le', '-ar', '24000', '-ac', '1'] : [];
  const { stderr } = await run(ffmpegPath, ['-hide_banner', '-nostdin', ...input, '-i', file, '-f', 'null', '-'], { maxBuffer: 8 * 1024 * 1024 });
  const stream = /Stream #0:0[^:]*: Audio: (\w+)[^,]*, (\d+) Hz/.exec(stderr);
  // The decoded length (`time=` of the last progress line) is exact; the header's Duration can be an estimate.
  const times = [...stderr.matchAll(/time=(\d+):(\d+):(\d+\.\d+)/g)];
  const last = times[times.length - 1];
  if (!stream || !last) {
    throw new Error(`ffmpeg could not decode the audio:\n${stderr.slice(-2000)}`);
  }
  return { codec: stream[1], sampleRate: Number(stream[2]), seconds: Number(last[1]) * 3600 + Number(last[2]) * 60 + Number(last[3]) };
}
