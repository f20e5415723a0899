/**
 * A RIFF WAVE file around 16-bit PCM, written here rather than by ffmpeg: ffmpeg writing to a pipe cannot seek
 * back and leaves the RIFF and data sizes at 0xFFFFFFFF.
 */
import type { Pcm } from './pcm.js';

export function wavFile(pcm: Pcm): Uint8Array {
  const dataBytes = pcm.samples.length * 2;
  const file = new Uint8Array(44 + dataBytes);
  const view = new DataView(file.buffer);
  const ascii = (offset: number, text: string) => {
    for (let i = 0; i < text.length; i += 1) {
      file[offset + i] = text.charCodeAt(i);
    }
  };
  ascii(0, 'RIFF');
  view.setUint32(4, 36 + dataBytes, true);
  ascii(8, 'WAVE');
  ascii(12, 'fmt ');
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true); // PCM
  view.setUint16(22, pcm.channels, true);
  view.setUint32(24, pcm.sampleRate, true);
  view.setUint32(28, pcm.sampleRate * pcm.channels * 2, true);
  view.setUint16(32, pcm.channels * 2, true);
  view.setUint16(34, 16, true);
  ascii(36, 'data');
  view.setUint32(40, dataBytes, true);
  new Int16Array(file.buffer, 44, pcm.samples.length).set(pcm.samples);
  return file;
}
