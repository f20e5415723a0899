import { describe, expect, it } from 'vitest';
import { sampleAudio, type SampleAudioFormat } from '../../../test/fakes/media-samples.js';
import { audioSeconds, estimateAudioSeconds, sniffAudioFormat, type SniffedAudio } from './audio-duration.js';

const CONTAINERS: Record<Exclude<SampleAudioFormat, 'webm' | 'm4a'>, SniffedAudio | 'pcm'> = {
  mp3: 'mp3',
  opus: 'ogg',
  aac: 'aac',
  flac: 'flac',
  wav: 'wav',
  pcm: 'pcm',
};

describe('audio duration from the bytes', () => {
  it.each(Object.keys(CONTAINERS) as Array<keyof typeof CONTAINERS>)(
    'reads the length of %s made by ffmpeg',
    async (format) => {
      const container = CONTAINERS[format];
      for (const seconds of [0.7, 2.5]) {
        const bytes = await sampleAudio(format, seconds, true);
        if (container !== 'pcm') {
          expect(sniffAudioFormat(bytes)).toBe(container);
        }
        // Encoders pad to whole frames and add priming samples (aac 1024): real audio in the file, within 0.1 s.
        expect(Math.abs(audioSeconds(bytes, container)! - seconds)).toBeLessThan(0.1);
      }
    },
  );

  it('reads a WAV whose sizes were left unset by a pipe writer', async () => {
    const bytes = await sampleAudio('wav', 1.5);
    const view = new DataView(bytes.buffer, bytes.byteOffset);
    const data = Buffer.from(bytes).indexOf('data');
    expect(view.getUint32(data + 4, true)).toBe(0xffffffff); // ffmpeg to a pipe cannot seek back
    expect(audioSeconds(bytes, 'wav')).toBeCloseTo(1.5, 3);
  });

  it('reads streamed mp3, ogg and aac too, and leaves a streamed FLAC (no sample total) to the estimate', async () => {
    for (const format of ['mp3', 'opus', 'aac'] as const) {
      expect(Math.abs(audioSeconds(await sampleAudio(format, 1.2), CONTAINERS[format])! - 1.2)).toBeLessThan(0.1);
    }
    const flac = await sampleAudio('flac', 1.2);
    expect(sniffAudioFormat(flac)).toBe('flac');
    expect(audioSeconds(flac, 'flac')).toBeUndefined();
  });

  it('says nothing of bytes it cannot read, and estimates from the size instead', () => {
    const noise = new TextEncoder().encode('<html>not audio at all</html>');
    expect(sniffAudioFormat(noise)).toBeUndefined();
    expect(audioSeconds(noise, 'mp3')).toBeUndefined();
    expect(audioSeconds(noise, 'flac')).toBeUndefined();
    expect(estimateAudioSeconds(16_000, 'mp3')).toBe(1);
  });
});
