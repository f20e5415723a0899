import { describe, expect, it } from 'vitest';
import { sampleAudio } from '../../../test/fakes/media-samples.js';
import { sniffAudioContainer } from './sniff-audio-container.js';

describe('sniffAudioContainer', () => {
  it.each([
    ['wav', 'wav'],
    ['mp3', 'mp3'],
    ['opus', 'ogg'],
    ['flac', 'flac'],
    ['webm', 'webm'],
    ['aac', 'aac'],
  ] as const)('recognises %s made by ffmpeg as %s', async (format, container) => {
    expect(sniffAudioContainer(await sampleAudio(format, 0.5))).toBe(container);
  });

  it('recognises M4A by its ftyp box', async () => {
    expect(sniffAudioContainer(await sampleAudio('m4a', 0.5, true))).toBe('mp4');
  });

  it('refuses text, images and short bytes', () => {
    expect(sniffAudioContainer(new TextEncoder().encode('just some words, not audio'))).toBeUndefined();
    expect(
      sniffAudioContainer(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0])),
    ).toBeUndefined();
    expect(sniffAudioContainer(new Uint8Array([0x52, 0x49]))).toBeUndefined();
  });
});
