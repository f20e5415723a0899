/** The PCM inside a 16-bit RIFF WAVE file, found by walking its chunks (Flite's header is not always 44 bytes). */
import type { Pcm } from './pcm.js';

export function readWav(file: Uint8Array): Pcm {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const tag = (offset: number) => String.fromCharCode(...file.subarray(offset, offset + 4));
  if (file.length < 12 || tag(0) !== 'RIFF' || tag(8) !== 'WAVE') {
    throw new Error('not a RIFF WAVE file');
  }
  let channels = 0;
  let sampleRate = 0;
  let bits = 0;
  for (let offset = 12; offset + 8 <= file.length; ) {
    const size = view.getUint32(offset + 4, true);
    if (tag(offset) === 'fmt ') {
      channels = view.getUint16(offset + 10, true);
      sampleRate = view.getUint32(offset + 12, true);
      bits = view.getUint16(offset + 22, true);
    } else if (tag(offset) === 'data') {
      if (bits !== 16 || (channels !== 1 && channels !== 2)) {
        throw new Error(`unsupported WAVE: ${channels} channels of ${bits} bits`);
      }
      const length = Math.min(size, file.length - offset - 8) >> 1;
      const samples = new Int16Array(length);
      for (let i = 0; i < length; i += 1) {
        samples[i] = view.getInt16(offset + 8 + i * 2, true);
      }
      return { samples, sampleRate, channels: channels as 1 | 2 };
    }
    offset += 8 + size + (size & 1);
  }
  throw new Error('WAVE file without a data chunk');
}
