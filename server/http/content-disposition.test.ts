import { describe, expect, it } from 'vitest';
import { contentDisposition } from './content-disposition.js';

describe('contentDisposition', () => {
  it.each([
    ['plain.pdf', `attachment; filename="plain.pdf"; filename*=UTF-8''plain.pdf`],
    ["it's (1)*!.txt", `attachment; filename="it's (1)*!.txt"; filename*=UTF-8''it%27s%20%281%29%2A%21.txt`],
    ['a\\b"c', `attachment; filename="a_b_c"; filename*=UTF-8''a%5Cb%22c`],
    ['报告.pdf', `attachment; filename="__.pdf"; filename*=UTF-8''%E6%8A%A5%E5%91%8A.pdf`],
    ['x\r\nSet-Cookie: a=b', `attachment; filename="xSet-Cookie: a=b"; filename*=UTF-8''xSet-Cookie%3A%20a%3Db`],
  ])('%s', (filename, expected) => {
    expect(contentDisposition(filename)).toBe(expected);
  });
});
