import { describe, expect, it } from 'vitest';
import { createMediaSniffer, sniffMediaType } from './sniff-media-type.js';

describe('sniffMediaType', () => {
  it('keeps text that is fed one byte at a time (every multi-byte character split)', () => {
    const bytes = Buffer.from('Grüße 日本語 🙂 done');
    const sniffer = createMediaSniffer();
    for (const byte of bytes) {
      sniffer.update(Uint8Array.of(byte));
    }
    expect(sniffer.result('a.md')).toBe('text/markdown');
  });

  it.each([
    [
      'a truncated multi-byte character at the end',
      Buffer.from([0x61, 0xe6, 0x97]),
      'a.txt',
      'application/octet-stream',
    ],
    ['a NUL byte', Buffer.from('a\u0000b'), 'a.txt', 'application/octet-stream'],
    ['an overlong encoding', Buffer.from([0xc0, 0xaf]), 'a.txt', 'application/octet-stream'],
    ['a PNG named .txt', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]), 'a.txt', 'image/png'],
    ['an MP4', Buffer.from('\u0000\u0000\u0000\u0018ftypisom', 'latin1'), 'v', 'video/mp4'],
    ['an ID3 MP3', Buffer.from('ID3\u0004\u0000', 'latin1'), 'song', 'audio/mpeg'],
    ['nothing', Buffer.alloc(0), 'a.txt', 'application/octet-stream'],
  ])('%s', (_name, bytes, filename, expected) => {
    expect(sniffMediaType(bytes, filename)).toBe(expected);
  });
});
