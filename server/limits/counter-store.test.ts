/**
 * One suite, both counter stores: the in-process one and the Redis one (the shared Redis on 6379, each run under a
 * key prefix of its own). The clock is the tests' own number, so "a minute later" costs no waiting.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Limits } from '../core/limits.js';
import type { Admit, CounterStore, ScopeLimits } from './counter-store.js';
import { createMemoryCounters } from './memory-counters.js';
import { createRedisCounters, SETTLE_HOLD_MS } from './redis-counters.js';
import { SHARED_REDIS_URL, sharedRedisAvailable } from '../../test/helpers/shared-redis.js';

const REDIS_URL = SHARED_REDIS_URL;
const hasRedis = await sharedRedisAvailable();

const T0 = Date.UTC(2026, 10, 27, 12, 0, 0);
let leaseCounter = 0;

function admitOf(scopes: ScopeLimits[], now: number, extra: Partial<Admit> = {}): Admit {
  return {
    scopes,
    lease: `lease-${++leaseCounter}`,
    now,
    leaseMs: 30_000,
    tokens: 0,
    costUsd: 0,
    mediaUnits: 0,
    ...extra,
  };
}

function scope(limits: Limits, name = `key:${randomUUID()}`): ScopeLimits {
  return { scope: name, limits };
}

const stores: Array<[string, () => CounterStore]> = [['in process', () => createMemoryCounters()]];
if (hasRedis) {
  const prefix = `omnigate-test:${randomUUID()}:`;
  stores.push(['Redis', () => createRedisCounters({ url: REDIS_URL, prefix })]);
  afterAll(async () => {
    const client = new Redis(REDIS_URL);
    const keys = await client.keys(`${prefix}*`);
    if (keys.length > 0) {
      await client.del(...keys);
    }
    client.disconnect();
  });
}

describe.each(stores)('%s counters', (_name, make) => {
  let counters: CounterStore;
  beforeAll(() => {
    counters = make();
    return () => counters.close();
  });

  it('admits exactly rpm requests in a minute, and again once the oldest leaves the window', async () => {
    const key = scope({ rpm: 3 });
    const results = [];
    for (let i = 0; i < 5; i++) {
      results.push(await counters.admit(admitOf([key], T0 + i)));
    }
    expect(results.map((r) => r.admitted)).toEqual([true, true, true, false, false]);
    expect(results[2]!.rates.requests).toEqual({ limit: 3, remaining: 0, resetMs: 60_000 - 2 });
    const refused = results[3]!;
    expect(refused.admitted === false && refused.kind).toBe('rpm');
    expect(refused.admitted === false && refused.retryAfterMs).toBe(60_000 - 3);
    // The first request leaves the window at T0 + 60 s: one more is admitted, not two.
    expect((await counters.admit(admitOf([key], T0 + 60_000))).admitted).toBe(true);
    expect((await counters.admit(admitOf([key], T0 + 60_000))).admitted).toBe(false);
  });

  it('refuses tokens beyond the minute and settles the real count (never below empty)', async () => {
    const key = scope({ tpm: 1000 });
    expect((await counters.admit(admitOf([key], T0, { tokens: 600 }))).admitted).toBe(true);
    const second = await counters.admit(admitOf([key], T0, { tokens: 600 }));
    expect(second.admitted).toBe(false);
    expect(second.admitted === false && second.kind).toBe('tpm');
    // The first call used 100 tokens, not 600: settling frees the rest at once.
    await counters.settle({ scopes: [key], lease: 'x', now: T0, tokensDelta: -500, costUsd: 0, mediaUnits: 0 });
    const third = await counters.admit(admitOf([key], T0, { tokens: 600 }));
    expect(third.admitted).toBe(true);
    expect(third.rates.tokens?.remaining).toBe(300);
    // A settlement far below the estimate leaves the bucket empty, not negative.
    await counters.settle({ scopes: [key], lease: 'y', now: T0, tokensDelta: -1_000_000, costUsd: 0, mediaUnits: 0 });
    expect((await counters.admit(admitOf([key], T0, { tokens: 1000 }))).rates.tokens?.remaining).toBe(0);
    // Half a minute later half the bucket has drained.
    expect((await counters.admit(admitOf([key], T0 + 30_000, { tokens: 500 }))).admitted).toBe(true);
  });

  it("holds a concurrency slot until the call settles, and frees a crashed call's slot when its lease expires", async () => {
    const key = scope({ maxParallel: 2 });
    const first = admitOf([key], T0);
    expect((await counters.admit(first)).admitted).toBe(true);
    expect((await counters.admit(admitOf([key], T0))).admitted).toBe(true); // never settled: "crashed"
    const third = await counters.admit(admitOf([key], T0 + 1));
    expect(third.admitted === false && third.kind).toBe('parallel');
    await counters.settle({
      scopes: [key],
      lease: first.lease,
      now: T0 + 2,
      tokensDelta: 0,
      costUsd: 0,
      mediaUnits: 0,
    });
    expect((await counters.admit(admitOf([key], T0 + 3))).admitted).toBe(true);
    expect((await counters.admit(admitOf([key], T0 + 4))).admitted).toBe(false);
    // The crashed call's lease (30 s) runs out; renewing keeps a live one.
    expect((await counters.admit(admitOf([key], T0 + 30_001))).admitted).toBe(true);
  });

  it('reserves estimated spend, refuses once settled plus reserved reach the budget, and expires a crashed reservation', async () => {
    const key = scope({ budgetUsd: 0.01, budgetPeriod: 'day' });
    const calls = [];
    for (let i = 0; i < 5; i++) {
      calls.push(await counters.admit(admitOf([key], T0, { costUsd: 0.004, lease: `budget-${i}` })));
    }
    // 0, 0.004, 0.008 reserved before each admission: three admitted, the fourth sees 0.012 >= 0.01.
    expect(calls.map((c) => c.admitted)).toEqual([true, true, true, false, false]);
    expect(calls[3]!.admitted === false && calls[3]!.kind).toBe('budget');
    for (let i = 0; i < 2; i++) {
      await counters.settle({
        scopes: [key],
        lease: `budget-${i}`,
        now: T0,
        tokensDelta: 0,
        costUsd: 0.001,
        mediaUnits: 0,
      });
    }
    // Settled 0.002 + the third call's 0.004 in flight: room for one more.
    expect((await counters.admit(admitOf([key], T0, { costUsd: 0.004 }))).admitted).toBe(true);
    expect(await counters.spent(key, T0)).toBeCloseTo(0.002, 9);
    // After the leases expire only the settled 0.002 counts.
    expect((await counters.admit(admitOf([key], T0 + 31_000, { costUsd: 0.004 }))).admitted).toBe(true);
    // The next UTC day starts from nothing.
    const tomorrow = Date.UTC(2026, 10, 28, 0, 0, 1);
    expect(await counters.spent(key, tomorrow)).toBe(0);
  });

  it('counts media units per UTC day', async () => {
    const key = scope({ mediaUnitsPerDay: 10 });
    const first = admitOf([key], T0, { mediaUnits: 6 });
    expect((await counters.admit(first)).admitted).toBe(true);
    expect((await counters.admit(admitOf([key], T0, { mediaUnits: 6 }))).admitted).toBe(false);
    await counters.settle({ scopes: [key], lease: first.lease, now: T0, tokensDelta: 0, costUsd: 0, mediaUnits: 4 });
    expect((await counters.admit(admitOf([key], T0, { mediaUnits: 6 }))).admitted).toBe(true);
    const refused = await counters.admit(admitOf([key], T0, { mediaUnits: 1 }));
    expect(refused.admitted === false && refused.retryAfterMs).toBe(12 * 3_600_000);
  });

  it('applies the stricter of key and project, and refuses without counting anything', async () => {
    const project = scope({ rpm: 2 }, `project:${randomUUID()}`);
    const a = scope({ rpm: 10 });
    const b = scope({ rpm: 10 });
    expect((await counters.admit(admitOf([a, project], T0))).admitted).toBe(true);
    const second = await counters.admit(admitOf([b, project], T0));
    expect(second.admitted).toBe(true);
    expect(second.rates.requests?.remaining).toBe(0); // the project's, stricter than key b's 9
    const third = await counters.admit(admitOf([a, project], T0));
    expect(third.admitted === false && third.scope).toBe(project.scope);
    // Key a's refused request was not counted against it.
    const alone = await counters.admit(admitOf([a], T0));
    expect(alone.rates.requests?.remaining).toBe(8);
  });

  it('never goes below zero: a settlement below the estimate, after the reservation expired, or twice', async () => {
    const key = scope({ tpm: 1000, budgetUsd: 0.01, budgetPeriod: 'day', mediaUnitsPerDay: 10 });
    const call = admitOf([key], T0, { tokens: 900, costUsd: 0.008, mediaUnits: 8 });
    expect((await counters.admit(call)).admitted).toBe(true);
    // The lease (30 s) runs out before the call settles: an admission sweeps its reservation away.
    const later = T0 + 31_000;
    expect((await counters.admit(admitOf([key], later))).admitted).toBe(true);
    const settle = { scopes: [key], lease: call.lease, now: later, tokensDelta: -5000, costUsd: 0.001, mediaUnits: 1 };
    await counters.settle(settle);
    // Settled again (a bug upstream of the counters): the reservation is not released twice.
    await counters.settle({ ...settle, tokensDelta: -5000, costUsd: 0, mediaUnits: 0 });
    // The bucket is empty, not below: the whole minute remains, no more.
    const probe = await counters.admit(admitOf([key], later));
    expect(probe.rates.tokens).toMatchObject({ limit: 1000, remaining: 1000 });
    expect(await counters.spent(key, later)).toBeCloseTo(0.001, 9);
    // Settled $0.001 and 1 unit, nothing reserved: exactly three calls of $0.004 / 3 units fit, not more
    // (a reservation released twice would have left room for five).
    const admitted = [];
    for (let i = 0; i < 6; i++) {
      admitted.push((await counters.admit(admitOf([key], later, { costUsd: 0.004, mediaUnits: 3 }))).admitted);
    }
    expect(admitted).toEqual([true, true, true, false, false, false]);
  });

  it('renews the leases of every scope in one call, and only the leases named', async () => {
    const project = scope({ maxParallel: 3 }, `project:${randomUUID()}`);
    const a = scope({ maxParallel: 2 });
    const b = scope({ maxParallel: 1 });
    const calls = [admitOf([a, project], T0), admitOf([a, project], T0), admitOf([b, project], T0)];
    for (const call of calls) {
      expect((await counters.admit(call)).admitted).toBe(true);
    }
    // The second call of key a is not renewed: its lease runs out at T0 + 30 s, the others' at T0 + 50 s.
    await counters.renewLeases(
      new Map([
        [a.scope, [calls[0]!.lease]],
        [b.scope, [calls[2]!.lease]],
        [project.scope, [calls[0]!.lease, calls[2]!.lease]],
      ]),
      T0 + 20_000,
      30_000,
    );
    const atB = await counters.admit(admitOf([b], T0 + 40_000));
    expect(atB.admitted === false && atB.kind).toBe('parallel');
    // Key a and the project each freed exactly the unrenewed call's slot.
    expect((await counters.admit(admitOf([a, project], T0 + 40_000))).admitted).toBe(true);
    expect((await counters.admit(admitOf([a, project], T0 + 40_001))).admitted).toBe(false);
  });

  it('never revives a lease that expired or was settled', async () => {
    const key = scope({ maxParallel: 1 });
    const expired = admitOf([key], T0);
    expect((await counters.admit(expired)).admitted).toBe(true);
    // Renewed after its lease ran out (a stalled timer), before any admission swept it.
    await counters.renewLeases(new Map([[key.scope, [expired.lease]]]), T0 + 31_000, 30_000);
    const next = admitOf([key], T0 + 32_000);
    expect((await counters.admit(next)).admitted).toBe(true);
    await counters.settle({
      scopes: [key],
      lease: next.lease,
      now: T0 + 33_000,
      tokensDelta: 0,
      costUsd: 0,
      mediaUnits: 0,
    });
    // Renewed after it settled (the renewal raced the call's end).
    await counters.renewLeases(new Map([[key.scope, [next.lease, expired.lease]]]), T0 + 34_000, 30_000);
    expect((await counters.admit(admitOf([key], T0 + 35_000))).admitted).toBe(true);
  });

  it('never revives an expired reservation: its amount is released, not held again', async () => {
    const key = scope({ budgetUsd: 0.01, budgetPeriod: 'day' });
    const call = admitOf([key], T0, { costUsd: 0.01 });
    expect((await counters.admit(call)).admitted).toBe(true);
    expect((await counters.admit(admitOf([key], T0 + 1, { costUsd: 0.001 }))).admitted).toBe(false);
    await counters.renewLeases(new Map([[key.scope, [call.lease]]]), T0 + 31_000, 30_000);
    expect((await counters.admit(admitOf([key], T0 + 32_000, { costUsd: 0.001 }))).admitted).toBe(true);
  });

  it('renews more leases than one script call takes (batches of 1,000)', async () => {
    const key = scope({ maxParallel: 2_500 });
    const project = scope({ maxParallel: 2_500 }, `project:${randomUUID()}`);
    const calls = Array.from({ length: 2_500 }, () => admitOf([key, project], T0));
    const admitted = await Promise.all(calls.map((call) => counters.admit(call)));
    expect(admitted.every((a) => a.admitted)).toBe(true);
    const leases = calls.map((call) => call.lease);
    await counters.renewLeases(
      new Map([
        [key.scope, leases],
        [project.scope, leases],
      ]),
      T0 + 20_000,
      30_000,
    );
    // Every one of the 2,500 was renewed in both scopes: not one slot is free at T0 + 40 s.
    const probe = await counters.admit(admitOf([key, project], T0 + 40_000));
    expect(probe.admitted === false && probe.kind).toBe('parallel');
    expect((await counters.admit(admitOf([key, project], T0 + 50_001))).admitted).toBe(true);
  });
});

/** Redis keys expire on Redis's own clock: a scope's sets must outlive every lease they hold. */
describe.runIf(hasRedis)("Redis counters: the expiry of a scope's keys", () => {
  const prefix = `omnigate-test:${randomUUID()}:`;
  let counters: CounterStore;
  let client: Redis;
  beforeAll(() => {
    counters = createRedisCounters({ url: REDIS_URL, prefix });
    client = new Redis(REDIS_URL);
    return async () => {
      const keys = await client.keys(`${prefix}*`);
      if (keys.length > 0) {
        await client.del(...keys);
      }
      client.disconnect();
      await counters.close();
    };
  });
  const ttls = (name: string) =>
    Promise.all([':par', ':res', ':resamt', ':reserved'].map((suffix) => client.pttl(`${prefix}{${name}}${suffix}`)));

  it('a renewal keeps the sets at least twice the lease', async () => {
    const key = scope({ maxParallel: 5, budgetUsd: 100 });
    const now = Date.now();
    const call = admitOf([key], now, { leaseMs: 1_000, costUsd: 0.01 });
    expect((await counters.admit(call)).admitted).toBe(true);
    for (const ttl of await ttls(key.scope)) {
      expect(ttl).toBeGreaterThan(1_000);
      expect(ttl).toBeLessThanOrEqual(2_000);
    }
    await counters.renewLeases(new Map([[key.scope, [call.lease]]]), now + 500, 30_000);
    for (const ttl of await ttls(key.scope)) {
      expect(ttl).toBeGreaterThan(59_000);
    }
  });

  it("admitting a call with a shorter lease never shortens the sets' expiry", async () => {
    const key = scope({ maxParallel: 5, budgetUsd: 100 });
    const now = Date.now();
    expect((await counters.admit(admitOf([key], now, { leaseMs: 30_000, costUsd: 0.01 }))).admitted).toBe(true);
    expect((await counters.admit(admitOf([key], now, { leaseMs: 1_000, costUsd: 0.01 }))).admitted).toBe(true);
    for (const ttl of await ttls(key.scope)) {
      expect(ttl).toBeGreaterThan(59_000);
    }
  });

  it('a renewal of leases that are all gone creates no keys', async () => {
    const key = scope({ maxParallel: 5 });
    await counters.renewLeases(new Map([[key.scope, ['never-admitted']]]), Date.now(), 30_000);
    expect(await ttls(key.scope)).toEqual([-2, -2, -2, -2]);
  });
});

/**
 * Settlements are held until the next admissions (or SETTLE_HOLD_MS): another instance must still see a freed
 * slot within that bound, and close() must send what is held.
 */
describe.runIf(hasRedis)('Redis counters: held settlements', () => {
  const prefix = `omnigate-test:${randomUUID()}:`;
  afterAll(async () => {
    const client = new Redis(REDIS_URL);
    const keys = await client.keys(`${prefix}*`);
    if (keys.length > 0) {
      await client.del(...keys);
    }
    client.disconnect();
  });

  it('a freed slot reaches the other instances within SETTLE_HOLD_MS, with no admission to carry it', async () => {
    const first = createRedisCounters({ url: REDIS_URL, prefix });
    const second = createRedisCounters({ url: REDIS_URL, prefix });
    try {
      const key = scope({ maxParallel: 1 });
      const call = admitOf([key], T0);
      expect((await first.admit(call)).admitted).toBe(true);
      expect((await second.admit(admitOf([key], T0))).admitted).toBe(false);
      const held = Date.now();
      await first.settle({ scopes: [key], lease: call.lease, now: T0, tokensDelta: 0, costUsd: 0, mediaUnits: 0 });
      // The settlement resolves once Redis has it: not before the hold, and not much after it.
      expect(Date.now() - held).toBeGreaterThanOrEqual(SETTLE_HOLD_MS - 2);
      expect((await second.admit(admitOf([key], T0 + 1))).admitted).toBe(true);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  it("the instance's next admission carries its held settlement (no wait) and close() sends the rest", async () => {
    const first = createRedisCounters({ url: REDIS_URL, prefix });
    const second = createRedisCounters({ url: REDIS_URL, prefix });
    try {
      const key = scope({ maxParallel: 1, budgetUsd: 1 });
      const call = admitOf([key], T0);
      expect((await first.admit(call)).admitted).toBe(true);
      void first.settle({ scopes: [key], lease: call.lease, now: T0, tokensDelta: 0, costUsd: 0.25, mediaUnits: 0 });
      // Sent before this admission, in the same write: the slot is free for it at once.
      const next = admitOf([key], T0 + 1);
      expect((await first.admit(next)).admitted).toBe(true);
      void first.settle({ scopes: [key], lease: next.lease, now: T0 + 2, tokensDelta: 0, costUsd: 0.5, mediaUnits: 0 });
      await first.close();
      expect(await second.spent(key, T0 + 3)).toBeCloseTo(0.75, 9);
    } finally {
      await second.close();
    }
  });
});
