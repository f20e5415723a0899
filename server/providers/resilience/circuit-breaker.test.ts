/**
 * The circuits in memory and in Redis (the local one, under a key prefix of this test's own): the threshold
 * opens a circuit, the cooldown ends in exactly one probe, and with Redis a circuit opened by one instance is
 * open for another. Time is a clock the test moves.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryBreakers, type CircuitBreakers } from './circuit-breaker.js';
import { createRedisBreakers } from './redis-breakers.js';

const REDIS_URL = process.env.OMNIGATE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `omnigate-test-${randomUUID()}:`;
const opened: CircuitBreakers[] = [];

afterAll(async () => {
  await Promise.all(opened.map((breakers) => breakers.close()));
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) {
    await redis.del(...keys);
  }
  await redis.quit();
});

async function behaves(make: (now: () => number) => CircuitBreakers[]) {
  let time = 1_000_000;
  const [first, second] = make(() => time);
  const other = second ?? first!;
  const id = `dep-${randomUUID()}`;
  for (let failure = 0; failure < 3; failure += 1) {
    const permit = await first!.acquire(id);
    expect(permit.allowed).toBe(true);
    await first!.failure(id, permit);
  }
  // Open on both instances: no calls.
  expect((await first!.acquire(id)).allowed).toBe(false);
  expect((await other.acquire(id)).allowed).toBe(false);
  expect(await other.state(id)).toEqual({ state: 'open', failures: 3 });
  time += 1_001;
  // Cooldown over: exactly one probe, whichever instance asks first.
  const probe = await other.acquire(id);
  expect(probe).toMatchObject({ allowed: true, probe: true });
  expect((await first!.acquire(id)).allowed).toBe(false);
  expect((await other.acquire(id)).allowed).toBe(false);
  // The probe fails: open again for a cooldown.
  expect(await other.failure(id, probe)).toBe('open');
  expect((await first!.acquire(id)).allowed).toBe(false);
  time += 1_001;
  const second_probe = await first!.acquire(id);
  expect(second_probe.probe).toBe(true);
  await first!.success(id, second_probe);
  expect(await other.state(id)).toEqual({ state: 'closed', failures: 0 });
  expect(await other.acquire(id)).toMatchObject({ allowed: true, probe: false });
}

describe('circuit breakers', () => {
  it('in memory: threshold, cooldown, one probe', async () => {
    await behaves((now) => [createMemoryBreakers({ failureThreshold: 3, cooldownMs: 1_000 }, now)]);
  });

  it('in Redis: a circuit opened by one instance is open for another, and only one takes the probe', async () => {
    await behaves((now) => {
      const make = () => createRedisBreakers({ url: REDIS_URL, prefix, failureThreshold: 3, cooldownMs: 1_000, now });
      const pair = [make(), make()];
      opened.push(...pair);
      return pair;
    });
  });
});
