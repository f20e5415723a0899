/**
 * Reads what an image or WAV answer holds instead of counting its bytes: PNG/JPEG/WebP kind and PNG dimensions
 * from their headers, WAV from its RIFF header. Other audio is decoded by `probe-audio.ts`.
 */

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
      format = {
        channels: buffer.readUInt16LE(offset + 10),
        sampleRate: buffer.readUInt32LE(offset + 12),
        bitsPerSample: buffer.readUInt16LE(offset + 22),
      };
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
