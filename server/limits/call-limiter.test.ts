/**
 * The call limiter's lease renewals, on a real clock (the renewal timer and Redis's key expiry both run on it):
 * one store call per tick for every call in flight, grouped by scope, and a call that runs for many leases keeps
 * its slot. The Redis cases use the shared Redis on 6379 under a key prefix of their own.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import type { Limits } from '../core/limits.js';
import type { ApiKeyRecord } from '../storage/key-store.js';
import type { CallEndListener, CallRecord } from '../usage/call-record.js';
import { type CallLimiter, createCallLimiter } from './call-limiter.js';
import type { CounterStore } from './counter-store.js';
import { createMemoryCounters } from './memory-counters.js';
import { createPriceTable } from './prices.js';
import { createRedisCounters } from './redis-counters.js';
import { SHARED_REDIS_URL, sharedRedisAvailable } from '../../test/helpers/shared-redis.js';

const REDIS_URL = SHARED_REDIS_URL;
const hasRedis = await sharedRedisAvailable();
const prefix = `omnigate-test:${randomUUID()}:`;
afterAll(async () => {
  if (!hasRedis) {
    return;
  }
  const client = new Redis(REDIS_URL);
  const keys = await client.keys(`${prefix}*`);
  if (keys.length > 0) {
    await client.del(...keys);
  }
  client.disconnect();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits for a condition the renewal timer makes true (no fixed sleep: a loaded machine runs timers late). */
async function until(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) {
      throw new Error('timed out');
    }
    await sleep(5);
  }
}

function keyOf(limits: Limits, project?: string): ApiKeyRecord {
  return {
    id: randomUUID(),
    name: 'test',
    prefix: '',
    allowedModels: [],
    createdAt: 0,
    revokedAt: null,
    project: project ?? null,
    limits,
  };
}

/** A call record the test ends itself. */
function callOf(): { call: CallRecord; end(): void } {
  const listeners: CallEndListener[] = [];
  const facts = {
    operation: 'listModels',
    modelRequested: null,
    model: null,
    provider: null,
    usage: null,
    units: null,
    media: null,
  };
  const call = {
    ...facts,
    defer: () => undefined,
    complete: () => undefined,
    whenEnded: (listener: CallEndListener) => listeners.push(listener),
  } as unknown as CallRecord;
  return { call, end: () => listeners.forEach((listener) => listener({ ...facts, status: 200 }, 0)) };
}

function limiterOf(counters: CounterStore, leaseMs: number, projects: Record<string, Limits> = {}): CallLimiter {
  return createCallLimiter({
    counters,
    source: {
      limitsFor: (key) => ({
        key: key.limits ?? {},
        project: key.project ? { name: key.project, limits: projects[key.project]! } : undefined,
      }),
    },
    prices: createPriceTable({
      configured: {},
      describe: () => undefined,
      defaults: () => undefined,
      warn: () => undefined,
    }),
    resolveModel: () => undefined,
    logger: pino({ level: 'silent' }),
    onStoreDown: 'deny',
    leaseMs,
  });
}

let requests = 0;
function begin(limiter: CallLimiter, key: ApiKeyRecord, call: CallRecord): Promise<void> {
  return limiter.begin({
    key,
    call,
    operation: 'listModels',
    body: undefined,
    bodyBytes: 0,
    requestId: `req_${++requests}`,
    setHeader: () => undefined,
  })!;
}

describe('call limiter renewals', () => {
  it('renews every call in flight with one store call per tick, grouped by scope, and stops renewing ended calls', async () => {
    const memory = createMemoryCounters();
    const ticks: Array<Map<string, string[]>> = [];
    const counters: CounterStore = {
      ...memory,
      renewLeases(leases, now, leaseMs) {
        ticks.push(new Map([...leases].map(([scope, list]) => [scope, [...list].sort()])));
        return memory.renewLeases(leases, now, leaseMs);
      },
    };
    const project = `p-${randomUUID()}`;
    const limiter = limiterOf(counters, 200, { [project]: { maxParallel: 10 } });
    const a = keyOf({ maxParallel: 5 }, project);
    const b = keyOf({ maxParallel: 5 });
    const calls = [callOf(), callOf(), callOf()];
    await begin(limiter, a, calls[0]!.call);
    await begin(limiter, a, calls[1]!.call);
    await begin(limiter, b, calls[2]!.call);
    await until(() => ticks.length >= 1); // every half lease: 100 ms
    const tick = ticks.at(-1)!;
    expect([...tick.keys()].sort()).toEqual([`key:${a.id}`, `key:${b.id}`, `project:${project}`].sort());
    expect(tick.get(`key:${a.id}`)).toHaveLength(2);
    expect(tick.get(`project:${project}`)).toEqual(tick.get(`key:${a.id}`));
    expect(tick.get(`key:${b.id}`)).toHaveLength(1);
    calls[0]!.end();
    calls[2]!.end();
    const seen = ticks.length;
    await until(() => ticks.length > seen);
    const later = ticks.at(-1)!;
    expect([...later.keys()].sort()).toEqual([`key:${a.id}`, `project:${project}`].sort());
    expect(later.get(`key:${a.id}`)).toHaveLength(1);
    calls[1]!.end();
    await memory.close();
  });

  const stores: Array<[string, () => CounterStore]> = [['in process', () => createMemoryCounters()]];
  if (hasRedis) {
    stores.push(['Redis', () => createRedisCounters({ url: REDIS_URL, prefix })]);
  }
  it.each(stores)('%s: a call running for many leases keeps its slot until it ends', async (_name, make) => {
    const counters = make();
    const leaseMs = 600;
    const limiter = limiterOf(counters, leaseMs);
    const key = keyOf({ maxParallel: 1 });
    const long = callOf();
    await begin(limiter, key, long.call);
    // Two and a half leases: longer than the 2 × lease a Redis set lived after its admission.
    await sleep(leaseMs * 2.5);
    await expect(begin(limiter, key, callOf().call)).rejects.toMatchObject({ status: 429 });
    long.end();
    // Once the settlement's round trip is done the slot is free (a refused attempt counts for nothing).
    let admitted = false;
    for (let attempt = 0; attempt < 200 && !admitted; attempt++) {
      const next = callOf();
      admitted = await begin(limiter, key, next.call).then(
        () => true,
        () => false,
      );
      next.end();
      await sleep(10);
    }
    expect(admitted).toBe(true);
    await counters.close();
  });
});
