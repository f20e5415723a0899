/**
 * The container of a caller's audio, from its first bytes: WAV, FLAC, Ogg, WebM (Matroska's EBML header), MP4
 * (`ftyp`: M4A and MP4), MP3 (an ID3 tag or an MPEG audio frame) and ADTS AAC. Anything else is not audio we
 * take. Whether the bytes really decode is ffmpeg's to say (probe-audio-duration.ts).
 */
import type { AudioContainer } from '../../core/models.js';

const ascii = (bytes: Uint8Array, offset: number, text: string) =>
  [...text].every((char, index) => bytes[offset + index] === char.charCodeAt(0));

export function sniffAudioContainer(bytes: Uint8Array): AudioContainer | undefined {
  if (bytes.length < 12) {
    return undefined;
  }
  if (ascii(bytes, 0, 'RIFF') && ascii(bytes, 8, 'WAVE')) {
    return 'wav';
  }
  if (ascii(bytes, 0, 'fLaC')) {
    return 'flac';
  }
  if (ascii(bytes, 0, 'OggS')) {
    return 'ogg';
  }
  if (bytes[0] === 0x1a && bytes[1] === 0x45 && bytes[2] === 0xdf && bytes[3] === 0xa3) {
    return 'webm';
  }
  if (ascii(bytes, 4, 'ftyp')) {
    return 'mp4';
  }
  if (ascii(bytes, 0, 'ID3')) {
    return 'mp3';
  }
  // ADTS: sync 0xFFF with layer bits 00; MPEG audio: sync 0xFFE with a layer.
  if (bytes[0] === 0xff && (bytes[1]! & 0xf6) === 0xf0) {
    return 'aac';
  }
  if (bytes[0] === 0xff && (bytes[1]! & 0xe0) === 0xe0 && (bytes[1]! & 0x06) !== 0) {
    return 'mp3';
  }
  return undefined;
}
