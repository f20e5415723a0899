import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createMediaLinks } from './media-links.js';

function parts(link: string) {
  const url = new URL(link, 'http://x');
  return {
    id: url.pathname.split('/').pop()!,
    expires: Number(url.searchParams.get('expires')),
    signature: url.searchParams.get('signature')!,
  };
}

describe('media links', () => {
  const pepper = randomBytes(32);
  const links = createMediaLinks(pepper);

  it('accepts its own link until it expires, then says expired', () => {
    const { id, expires, signature } = parts(links.pathFor('media_abcdefgh12', 1000));
    expect(id).toBe('media_abcdefgh12');
    expect(links.check(id, expires, signature, 999)).toBe('ok');
    expect(links.check(id, expires, signature, 1000)).toBe('expired');
  });

  it('refuses a tampered id, expiry or signature, and a link signed under another pepper', () => {
    const { id, expires, signature } = parts(links.pathFor('media_abcdefgh12', 1000));
    expect(links.check('media_abcdefgh13', expires, signature, 0)).toBe('invalid_signature');
    expect(links.check(id, expires + 3600, signature, 0)).toBe('invalid_signature');
    const flipped = (signature[0] === 'A' ? 'B' : 'A') + signature.slice(1);
    expect(links.check(id, expires, flipped, 0)).toBe('invalid_signature');
    expect(links.check(id, expires, signature.slice(1), 0)).toBe('invalid_signature');
    expect(createMediaLinks(randomBytes(32)).check(id, expires, signature, 0)).toBe('invalid_signature');
    // A forged signature is refused even when the link is also expired: expiry is not an oracle.
    expect(links.check(id, 10, signature, 5000)).toBe('invalid_signature');
  });
});
