import { describe, expect, it } from 'vitest';
import { decodeBase64Bytes, parseJsonBytes } from './body-jobs.js';
import { BASE64_SLICED_MIN_CHARS, decodeBase64, encodeBase64 } from './large-base64.js';

const MiB = 1024 * 1024;
const clean = Buffer.alloc(3 * MiB, 7).toString('base64');

function bytesOf(text: string) {
  const buffer = Buffer.from(text);
  return { bytes: buffer.buffer as ArrayBuffer, byteOffset: buffer.byteOffset, byteLength: buffer.byteLength };
}

describe('large base64 strings', () => {
  it('decode to the bytes Buffer.from gives, whatever the string holds', async () => {
    const strings = [
      clean,
      `${clean.slice(0, MiB + 5)} \n${clean.slice(MiB + 5)}`, // whitespace off the 4-char grid
      `${clean.slice(0, 2 * MiB + 1)}=${clean.slice(2 * MiB + 1)}`, // '=' ends decoding
      `${clean.slice(0, MiB - 1)}\u0141\u{1F600}${clean.slice(MiB - 1)}`, // code units over 0xFF
      `${clean.slice(0, 5)}-_*%${clean.slice(5)}QQ`, // base64url letters, junk, a short last group
    ];
    for (const text of strings) {
      expect(text.length).toBeGreaterThanOrEqual(BASE64_SLICED_MIN_CHARS);
      expect(Buffer.from(await decodeBase64(text)).equals(Buffer.from(text, 'base64'))).toBe(true);
    }
    expect(Buffer.from(await decodeBase64('QUJD')).toString()).toBe('ABC');
  });

  it('encode to the string Buffer.toString gives, any length', async () => {
    for (const size of [1, 768 * 1024, 768 * 1024 + 1, 2 * MiB + 2]) {
      const bytes = new Uint8Array(size).map((_, index) => index * 7);
      expect(await encodeBase64(bytes)).toBe(Buffer.from(bytes).toString('base64'));
    }
  });

  it('decode a long string in slices, letting the event loop turn between them', async () => {
    const text = Buffer.alloc(18 * MiB, 5).toString('base64'); // 24 MiB, the body limit's worth
    const spaced = `${text.slice(0, 12 * MiB)} ${text.slice(12 * MiB)}`; // not plain: decoded in a thread
    for (const input of [text, spaced]) {
      // Each turn of the event loop runs one tick; a decoding that held the loop throughout would see none.
      let ticks = 0;
      let ticking = true;
      const tick = () => {
        ticks += 1;
        if (ticking) setImmediate(tick);
      };
      setImmediate(tick);
      const result = await decodeBase64(input);
      ticking = false;
      expect(result.byteLength).toBe(18 * MiB);
      expect(ticks).toBeGreaterThanOrEqual(20);
    }
  });
});

describe('parseJsonBytes', () => {
  it('parses as express.json does: BOM dropped, empty body {}, its messages for a non-object and bad JSON', () => {
    expect(parseJsonBytes(bytesOf('\ufeff{"a":1}'))).toEqual({ value: { a: 1 } });
    expect(parseJsonBytes(bytesOf(''))).toEqual({ value: {} });
    expect(parseJsonBytes(bytesOf(' \n[1]'))).toEqual({ value: [1] });
    expect(parseJsonBytes(bytesOf('  "abc"'))).toEqual({
      syntaxError: `Unexpected token '"', "  "abc"" is not valid JSON`,
    });
    expect(parseJsonBytes(bytesOf('   '))).toEqual({ syntaxError: 'Unexpected end of JSON input' });
    expect(parseJsonBytes(bytesOf('{"a":'))).toEqual({ syntaxError: expect.stringContaining('JSON') });
  });

  it('decodes base64 from the low bytes of the code units', () => {
    const text = 'QU\u0141JD';
    const latin1 = Buffer.from(text, 'latin1');
    const out = decodeBase64Bytes({
      bytes: latin1.buffer as ArrayBuffer,
      byteOffset: latin1.byteOffset,
      byteLength: latin1.byteLength,
    });
    expect(Buffer.from(out).equals(Buffer.from(text, 'base64'))).toBe(true);
  });
});
