/**
 * Signed, expiring links to stored media (`GET /v1/media/{id}?expires=…&signature=…`), which a browser can load
 * without the API key. The signature is HMAC-SHA256 over the id and the expiry, under a key derived from the
 * data directory's pepper: links survive a restart, and nobody without the pepper file can make or extend one.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface MediaLinks {
  /** The path and query of a link to `id` valid until `expiresAt` (unix seconds). */
  pathFor(id: string, expiresAt: number): string;
  /** 'ok', or why the link must be refused. Expiry is only judged once the signature is known good. */
  check(id: string, expiresAt: number, signature: string, now: number): 'ok' | 'invalid_signature' | 'expired';
}

export function createMediaLinks(pepper: Buffer): MediaLinks {
  // A key of its own, so a signature can never be replayed as an API key hash or the other way round.
  const key = createHmac('sha256', pepper).update('omnigate media links v1').digest();
  const sign = (id: string, expiresAt: number) =>
    createHmac('sha256', key).update(`${id}.${expiresAt}`).digest('base64url');
  return {
    pathFor(id, expiresAt) {
      return `/v1/media/${id}?expires=${expiresAt}&signature=${sign(id, expiresAt)}`;
    },
    check(id, expiresAt, signature, now) {
      const expected = Buffer.from(sign(id, expiresAt));
      const given = Buffer.from(signature);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        return 'invalid_signature';
      }
      return expiresAt <= now ? 'expired' : 'ok';
    },
  };
}
