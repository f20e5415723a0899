/**
 * Local allowances of the Redis counters (redis-allowance.ts): blocks taken far from the limits, given back when
 * unused, expiring when their instance crashed, and exact limits when traffic runs into them. The shared Redis on
 * 6379, each run under a key prefix of its own; the clock is the tests' own number.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { SHARED_REDIS_URL, sharedRedisAvailable } from '../../test/helpers/shared-redis.js';
import type { Limits } from '../core/limits.js';
import type { Admission, Admit, CounterStore, ScopeLimits } from './counter-store.js';
import { BLOCK_MS } from './redis-allowance.js';
import { createRedisCounters } from './redis-counters.js';
import { GRANT_SCRIPT } from './redis-scripts.js';

const hasRedis = await sharedRedisAvailable();
const T0 = Date.UTC(2026, 10, 27, 12, 0, 0);
const LEASE_MS = 30_000;
const prefix = `omnigate-test:${randomUUID()}:`;
let leaseCounter = 0;

function admitOf(scopes: ScopeLimits[], now: number, extra: Partial<Admit> = {}): Admit {
  return {
    scopes,
    lease: `lease-${++leaseCounter}`,
    now,
    leaseMs: LEASE_MS,
    tokens: 0,
    costUsd: 0,
    mediaUnits: 0,
    ...extra,
  };
}

function scope(limits: Limits): ScopeLimits {
  return { scope: `key:${randomUUID()}`, limits };
}

describe.runIf(hasRedis)('Redis counters: local allowances', () => {
  const client = hasRedis ? new Redis(SHARED_REDIS_URL) : undefined!;
  const opened: CounterStore[] = [];
  function instance(allowances = true): CounterStore {
    const store = createRedisCounters({ url: SHARED_REDIS_URL, prefix, allowances });
    opened.push(store);
    return store;
  }
  afterAll(async () => {
    await Promise.allSettled(opened.map((store) => store.close()));
    const keys = await client.keys(`${prefix}*`);
    if (keys.length > 0) {
      await client.del(...keys);
    }
    client.disconnect();
  });
  const base = (key: ScopeLimits) => `${prefix}{${key.scope}}`;
  const blockMembers = async (key: ScopeLimits, set: 'req' | 'par') =>
    (await client.zrange(`${base(key)}:${set}`, '0', '-1')).filter((member) => /:b\d+:[rp]\d+$/.test(member));

  it('two instances holding blocks at once admit exactly the limit, with exact headers at the end', async () => {
    const key = scope({ rpm: 10_000 });
    const [a, b] = [instance(), instance()];
    const first = [await a.admit(admitOf([key], T0)), await b.admit(admitOf([key], T0))];
    expect(first.every((admission) => admission.admitted)).toBe(true);
    // Both took a block of 10 (1/1000 of the limit): two instances' entries, 20 in all, counted at once.
    const members = await blockMembers(key, 'req');
    expect(members).toHaveLength(20);
    expect(new Set(members.map((member) => member.split(':b')[0])).size).toBe(2);
    const results: Admission[] = [...first];
    for (let i = 0; i < 10_400; i++) {
      results.push(await (i % 2 === 0 ? a : b).admit(admitOf([key], T0 + 1)));
    }
    const admitted = results.filter((admission) => admission.admitted).length;
    expect(admitted).toBe(10_000);
    expect(await client.zcard(`${base(key)}:req`)).toBe(10_000);
    const lastAdmitted = results.findLastIndex((admission) => admission.admitted);
    const firstRefused = results.findIndex((admission) => !admission.admitted);
    expect(firstRefused).toBe(lastAdmitted + 1);
    expect(results[lastAdmitted]!.rates.requests?.remaining).toBe(0);
    const refused = results[firstRefused]!;
    expect(refused.admitted === false && refused.kind).toBe('rpm');
    expect(refused.rates.requests?.remaining).toBe(0);
  });

  it('concurrent waves over two instances (blocks ending every 1 s of their clock, calls ending in between) admit exactly the limit and free every slot', async () => {
    const key = scope({ rpm: 10_000, tpm: 100_000_000, maxParallel: 100_000 });
    const [a, b] = [instance(), instance()];
    let admitted = 0;
    let wave = 0;
    const running: Array<{ store: CounterStore; call: Admit }> = [];
    while (wave < 160) {
      const calls = Array.from({ length: 80 }, (_, i) => ({
        store: (i + wave) % 3 === 0 ? b : a,
        call: admitOf([key], T0 + wave * 20, { tokens: 100 }),
      }));
      const results = await Promise.all(calls.map(({ store, call }) => store.admit(call)));
      calls.forEach((entry, i) => results[i]!.admitted && running.push(entry));
      admitted += results.filter((admission) => admission.admitted).length;
      // About half of what runs ends now, with more or fewer tokens than estimated.
      const ending = running.splice(0, Math.ceil(running.length / 2));
      await Promise.all(
        ending.map(({ store, call }, i) =>
          store.settle({
            scopes: [key],
            lease: call.lease,
            now: T0 + wave * 20,
            tokensDelta: (i % 5) * 20 - 40,
            costUsd: 0,
            mediaUnits: 0,
          }),
        ),
      );
      wave++;
    }
    expect(admitted).toBe(10_000);
    expect(await client.zcard(`${base(key)}:req`)).toBe(10_000);
    await Promise.all(
      running.map(({ store, call }) =>
        store.settle({
          scopes: [key],
          lease: call.lease,
          now: T0 + wave * 20,
          tokensDelta: 0,
          costUsd: 0,
          mediaUnits: 0,
        }),
      ),
    );
    await Promise.all([a.close(), b.close()]);
    expect(await client.zcard(`${base(key)}:par`)).toBe(0);
    expect(Number(await client.hget(`${base(key)}:tok`, 'level'))).toBeGreaterThanOrEqual(0);
  });

  it('a block counts as used at once: another instance sees its headroom taken, never more than the limit', async () => {
    // 8,000 slots: blocks of 8; after a block, at least 101 blocks must be left.
    const key = scope({ maxParallel: 8_000 });
    const [a, b] = [instance(), instance()];
    expect((await a.admit(admitOf([key], T0))).admitted).toBe(true);
    expect(await client.zcard(`${base(key)}:par`)).toBe(8);
    // Fill from b without settling (per call near the limit): exactly the 7,992 slots left, then refusals.
    const calls = Array.from({ length: 8_100 }, () => b.admit(admitOf([key], T0 + 1)));
    const results = await Promise.all(calls);
    expect(results.filter((admission) => admission.admitted)).toHaveLength(7_992);
    // a's block still admits its own 7 free slots, and not one more.
    const more = [];
    for (let i = 0; i < 9; i++) {
      more.push((await a.admit(admitOf([key], T0 + 2))).admitted);
    }
    expect(more).toEqual([true, true, true, true, true, true, true, false, false]);
    expect(await client.zcard(`${base(key)}:par`)).toBe(8_000);
  });

  it('gives back the unused part of a block on close(): requests, tokens and slots', async () => {
    const key = scope({ rpm: 100_000, tpm: 10_000_000, maxParallel: 100_000 });
    const a = instance();
    const call = admitOf([key], T0, { tokens: 100 });
    expect((await a.admit(call)).admitted).toBe(true);
    expect((await a.admit(admitOf([key], T0, { tokens: 100 }))).admitted).toBe(true);
    expect(await client.zcard(`${base(key)}:req`)).toBe(100);
    expect(await client.zcard(`${base(key)}:par`)).toBe(64);
    expect(Number(await client.hget(`${base(key)}:tok`, 'level'))).toBe(10_000);
    // The first call ends with 40 tokens instead of 100: folded into the block, no round trip.
    await a.settle({ scopes: [key], lease: call.lease, now: T0, tokensDelta: -60, costUsd: 0, mediaUnits: 0 });
    await a.close();
    // Left: the two requests admitted, the one slot still held (the second call runs), 140 tokens (less what
    // drained in the milliseconds the block lived: the bucket drains 166 tokens a millisecond).
    expect(await client.zcard(`${base(key)}:req`)).toBe(2);
    expect(await client.zcard(`${base(key)}:par`)).toBe(1);
    const level = Number(await client.hget(`${base(key)}:tok`, 'level'));
    expect(level).toBeLessThanOrEqual(140);
    expect(level).toBeGreaterThan(140 - 166 * 200);
  });

  it("a call still running when its block ends frees the block's slot in Redis when it settles", async () => {
    const key = scope({ maxParallel: 100_000 });
    const a = instance();
    const running = admitOf([key], T0);
    expect((await a.admit(running)).admitted).toBe(true);
    // The block's time is up: the next call gives it back and takes a new one.
    expect((await a.admit(admitOf([key], T0 + BLOCK_MS))).admitted).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 50));
    // The new block's 64, and the running call's slot of the old block.
    expect(await client.zcard(`${base(key)}:par`)).toBe(65);
    // Renewals reach the slot under its block name.
    await a.renewLeases(new Map([[key.scope, [running.lease]]]), T0 + 20_000, LEASE_MS);
    const [slot] = (await client.zrange(`${base(key)}:par`, '0', '-1')).filter((member) => member.endsWith(':b1:p1'));
    expect(Number(await client.zscore(`${base(key)}:par`, slot!))).toBe(T0 + 20_000 + LEASE_MS);
    await a.settle({ scopes: [key], lease: running.lease, now: T0 + 1, tokensDelta: 0, costUsd: 0, mediaUnits: 0 });
    await a.close();
    // Everything back: the second call's slot and its block's 63 free ones too.
    expect(await client.zcard(`${base(key)}:par`)).toBe(1);
  });

  it("a crashed instance's block expires like its calls: slots after the lease, entries after the window, tokens drain", async () => {
    const key = scope({ rpm: 100_000, tpm: 10_000_000, maxParallel: 100_000 });
    // The crashed instance: it took a block with the gateway's own script, then never gave anything back.
    const crashed = new Redis(SHARED_REDIS_URL);
    crashed.defineCommand('grant', { numberOfKeys: 0, lua: GRANT_SCRIPT });
    const grant = (crashed as unknown as { grant(...args: Array<string | number>): Promise<unknown[]> }).grant;
    const reply = await grant.call(
      crashed,
      'crashed:b1',
      100,
      10_000,
      64,
      BLOCK_MS,
      ...[T0, LEASE_MS, 'lease-crashed', 100, 0, 0, 1, 1],
      ...[base(key), 100_000, 10_000_000, 100_000, '', '', '', '', -1, 0],
    );
    crashed.disconnect();
    expect(reply[0]).toBe(2);
    expect(reply[5]).toBe(100_000 - 100);
    const b = instance(false);
    // Within the lease all 64 slots stay taken; the first admission after it finds them gone.
    await b.admit(admitOf([key], T0 + LEASE_MS - 1, { tokens: 1 }));
    expect(await client.zcard(`${base(key)}:par`)).toBe(65);
    const afterLease = await b.admit(admitOf([key], T0 + LEASE_MS + 1, { tokens: 1 }));
    expect(afterLease.admitted).toBe(true);
    expect(await client.zcard(`${base(key)}:par`)).toBe(2);
    // The block's 100 request entries count until BLOCK_MS + 60 s after its grant (its latest admission's window).
    expect(afterLease.rates.requests?.remaining).toBe(100_000 - 100 - 2);
    const later = await b.admit(admitOf([key], T0 + BLOCK_MS + 60_001, { tokens: 1 }));
    expect(later.rates.requests?.remaining).toBe(100_000 - 2 - 1);
    // The bucket drained the block's 10,000 tokens long ago: only the last call's token remains.
    expect(later.rates.tokens?.remaining).toBe(10_000_000 - 1);
  });

  it('never goes below zero: unused tokens given back after the bucket drained leave it empty', async () => {
    const key = scope({ tpm: 10_000_000 });
    const a = instance();
    expect((await a.admit(admitOf([key], T0, { tokens: 100 }))).admitted).toBe(true);
    expect(Number(await client.hget(`${base(key)}:tok`, 'level'))).toBe(10_000);
    // A minute later the bucket is empty; the block ends then and gives back 9,900 tokens it never used, and the
    // new block gives back its own 9,900 on close: 100 tokens less 19,800 given back is an empty bucket, not less.
    expect((await a.admit(admitOf([key], T0 + 60_000, { tokens: 100 }))).admitted).toBe(true);
    await a.close();
    const level = Number(await client.hget(`${base(key)}:tok`, 'level'));
    expect(level).toBeGreaterThanOrEqual(0);
    expect(level).toBeLessThanOrEqual(100);
  });

  it('takes no block near a limit, nor for a scope with a budget: every call goes to Redis', async () => {
    const small = scope({ rpm: 7_999 });
    const budget = scope({ rpm: 100_000, budgetUsd: 5 });
    const a = instance();
    expect((await a.admit(admitOf([small], T0))).admitted).toBe(true);
    expect((await a.admit(admitOf([budget], T0, { costUsd: 0.01 }))).admitted).toBe(true);
    expect(await client.zcard(`${base(small)}:req`)).toBe(1);
    expect(await client.zcard(`${base(budget)}:req`)).toBe(1);
    // rpm 10,000 with 9,000 taken: less than 101 blocks of 10 left, so per call.
    const near = scope({ rpm: 10_000 });
    const plain = instance(false);
    await Promise.all(Array.from({ length: 9_000 }, () => plain.admit(admitOf([near], T0))));
    expect((await a.admit(admitOf([near], T0))).admitted).toBe(true);
    expect(await blockMembers(near, 'req')).toHaveLength(0);
    expect(await client.zcard(`${base(near)}:req`)).toBe(9_001);
  });
});
