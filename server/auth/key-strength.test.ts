import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { keyWeaknesses } from './key-strength.js';

describe('keyWeaknesses', () => {
  it('finds nothing wrong with a generated key or a long random one', () => {
    expect(keyWeaknesses(`og-${randomBytes(24).toString('base64url')}`)).toEqual([]);
    expect(keyWeaknesses(randomBytes(16).toString('hex'))).toEqual([]);
  });

  it.each([
    ['og-env-key-one', ['shorter than 20 characters', 'fewer than 10 different characters']],
    ['og-Xr4$Lq9Zp', ['shorter than 20 characters']],
    ['aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', ['fewer than 10 different characters']],
    ['my-secret-gateway-key-for-ci', ['contains a common word or sequence (secret)']],
    [
      'changeme',
      [
        'shorter than 20 characters',
        'fewer than 10 different characters',
        'contains a common word or sequence (changeme)',
      ],
    ],
    ['Tr0ub4dor&3-qwerty-XyZ', ['contains a common word or sequence (qwerty)']],
    ['123456789012345678901234', ['contains a common word or sequence (123456)']],
  ])('%s: %o', (secret, reasons) => {
    expect(keyWeaknesses(secret)).toEqual(reasons);
  });
});
