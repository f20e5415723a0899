/**
 * Authentication answers a key the cache holds synchronously: `next` has run before the middleware returns,
 * so no database read (and no promise) sits on the hot path. A key not yet held waits for the key store once.
 */
import type { NextFunction, Request, Response } from 'express';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../storage/database.js';
import { createKeyCache } from '../storage/key-cache.js';
import { createLocalKeyChangeFeed } from '../storage/key-change-feed.js';
import { createKeyStore } from '../storage/key-store.js';
import { authenticate } from './authenticate.js';

function requestWith(secret: string): Request {
  const headers: Record<string, string> = { authorization: `Bearer ${secret}` };
  return { path: '/v1/models', get: (name: string) => headers[name.toLowerCase()] } as unknown as Request;
}

describe('authenticate', () => {
  it('admits a held key before returning, and a new key only after the store answered', async () => {
    const feed = createLocalKeyChangeFeed();
    const keys = createKeyStore(openDatabase(':memory:'), { changes: feed });
    const cache = createKeyCache(keys, feed);
    const { key, record } = await keys.create({ name: 'hot' });
    const middleware = authenticate(cache, () => false);
    const run = (secret: string) => {
      const res = { locals: {} } as Response;
      const calls: unknown[] = [];
      const done = new Promise<void>((resolve) => {
        middleware(requestWith(secret), res, ((error?: unknown) => {
          calls.push(error ?? 'next');
          resolve();
        }) as NextFunction);
      });
      return { res, calledBeforeReturn: calls.length > 0, done, calls };
    };

    const first = run(key);
    expect(first.calledBeforeReturn).toBe(false); // not held yet: the store is asked
    await first.done;
    expect(first.res.locals.apiKey?.id).toBe(record.id);

    const second = run(key);
    expect(second.calledBeforeReturn).toBe(true); // held: answered synchronously
    expect(second.calls).toEqual(['next']);
    expect(second.res.locals.apiKey?.id).toBe(record.id);

    await keys.revoke(record.id);
    const third = run(key);
    await third.done;
    expect((third.calls[0] as { status?: number }).status).toBe(401);
    cache.close();
  });
});
