import { describe, expect, it } from 'vitest';
import { encodeSrt, encodeVtt } from './subtitles.js';

describe('subtitles from segments', () => {
  const transcript = {
    text: 'One. Two.',
    segments: [
      { id: 0, start: 0, end: 1.5, text: ' One.' },
      { id: 1, start: 3661.0456, end: 3662.5, text: ' Two,\nstill two.' },
    ],
  };

  it('SRT: numbered cues, comma milliseconds, hours past one, line breaks inside a cue joined', () => {
    expect(encodeSrt(transcript)).toBe(
      '1\n00:00:00,000 --> 00:00:01,500\nOne.\n\n2\n01:01:01,046 --> 01:01:02,500\nTwo, still two.\n',
    );
  });

  it('WebVTT: the header, dot milliseconds, no numbers', () => {
    expect(encodeVtt(transcript)).toBe(
      'WEBVTT\n\n00:00:00.000 --> 00:00:01.500\nOne.\n\n01:01:01.046 --> 01:01:02.500\nTwo, still two.\n',
    );
  });

  it('a transcript without segments is one cue over its duration', () => {
    expect(encodeSrt({ text: 'All of it.', durationSeconds: 2.25 })).toBe(
      '1\n00:00:00,000 --> 00:00:02,250\nAll of it.\n',
    );
  });
});
