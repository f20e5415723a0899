/**
 * Decodes an MP4 back to raw RGBA frames with the ffmpeg binary, so tests judge what a viewer would see
 * rather than the bytes of the file.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ffmpegPath } from '../../server/engines/audio/ffmpeg-process.js';

export interface DecodedVideo {
  width: number;
  height: number;
  frames: Uint8Array[];
}

export async function decodeVideo(mp4: Uint8Array, width: number, height: number): Promise<DecodedVideo> {
  const binary = ffmpegPath();
  if (!binary) {
    throw new Error('decoding needs the ffmpeg binary');
  }
  const dir = await mkdtemp(join(tmpdir(), 'omnigate-decode-'));
  try {
    const file = join(dir, 'in.mp4');
    await writeFile(file, mp4);
    const raw = await new Promise<Buffer>((resolve, reject) => {
      const child = spawn(
        binary,
        ['-hide_banner', '-loglevel', 'error', '-i', file, '-f', 'rawvideo', '-pix_fmt', 'rgba', 'pipe:1'],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      const chunks: Buffer[] = [];
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('error', reject);
      child.on('close', (code) =>
        code === 0 ? resolve(Buffer.concat(chunks)) : reject(new Error(`ffmpeg could not decode: ${stderr}`)),
      );
    });
    const frameBytes = width * height * 4;
    if (raw.length % frameBytes !== 0) {
      throw new Error(`decoded ${raw.length} bytes, not whole ${width}×${height} frames`);
    }
    const frames = [];
    for (let offset = 0; offset < raw.length; offset += frameBytes) {
      frames.push(new Uint8Array(raw.subarray(offset, offset + frameBytes)));
    }
    return { width, height, frames };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Mean brightness 0–255 of an RGBA frame's region (rows `top`–`bottom` as fractions of the height). */
export function meanBrightness(frame: Uint8Array, width: number, height: number, top = 0, bottom = 1): number {
  let sum = 0;
  let count = 0;
  for (let y = Math.floor(top * height); y < Math.floor(bottom * height); y++) {
    for (let x = 0; x < width; x++) {
      const index = (y * width + x) * 4;
      sum += 0.2126 * frame[index] + 0.7152 * frame[index + 1] + 0.0722 * frame[index + 2];
      count++;
    }
  }
  return sum / count;
}
