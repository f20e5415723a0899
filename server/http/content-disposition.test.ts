import { describe, expect, it } from 'vitest';
import { contentDisposition } from './content-disposition.js';

describe('contentDisposition', () => {
  it.each([
    ['plain.pdf', `attachment; filename="plain.pdf"; filename*=UTF-8''plain.pdf`],
    ["it's (1)*!.txt", `attachment; filename="it's (1)*!.txt"; filename*=UTF-8''it%27s%20%281%29%2A%21.txt`],
    ['a\\b"c', `attachment; filename="a_b_c"; filename*=UTF-8''a%5Cb%22c`],
    ['报告.pdf', `attachment; filename="__.pdf"; filename*=UTF-8''%E6%8A%A5%E5%91%8A.pdf`],
    ['x\r\nSet-Cookie: a=b', `attachment; filename="xSet-Cookie: a=b"; filename*=UTF-8''xSet-Cookie%3A%20a%3Db`],
    // Bidi overrides, isolates and marks (and other format characters) never reach the header.
    ['invoice\u202Efdp.exe', `attachment; filename="invoicefdp.exe"; filename*=UTF-8''invoicefdp.exe`],
    [
      'a\u2066b\u2069\u200E\u200F\u202A\u202B\u202C\u202D.txt',
      `attachment; filename="ab.txt"; filename*=UTF-8''ab.txt`,
    ],
    ['z\u200Bw\uFEFF\u0085.txt', `attachment; filename="zw.txt"; filename*=UTF-8''zw.txt`],
    // The zero-width joiner is part of emoji sequences and scripts: it stays.
    [
      '\u{1F469}\u200D\u{1F4BB}.png',
      `attachment; filename="_____.png"; filename*=UTF-8''%F0%9F%91%A9%E2%80%8D%F0%9F%92%BB.png`,
    ],
  ])('%s', (filename, expected) => {
    expect(contentDisposition(filename)).toBe(expected);
  });
});
