/**
 * What one lease-renewal tick of the call limiter costs with 1,000 and 10,000 calls in flight: the gateway's CPU
 * (`process.cpuUsage`, user + system: building the commands, ioredis encoding them and decoding the replies), Redis's
 * CPU (`INFO cpu` used_cpu_user + used_cpu_sys, and the `evalsha` time of `INFO commandstats`; both server-wide, so
 * other clients of a shared Redis add noise) and the wall time until every renewal is answered.
 *
 * Each call holds a key scope (10 calls a key) and a project scope (10 projects), with a concurrency slot and a
 * spend reservation in both, as a budgeted key's stream does. The tick is the limiter's: with a store that has
 * `renewLeases` (this checkout) the leases grouped by scope in one call; with an older store (`renew`, one lease
 * at a time) one call per lease, as that limiter's timer sent them. With BENCH_BEFORE_DIR (a copy of an older
 * checkout's `server/`, with `node_modules` beside it) both run in the same process, ticks interleaved.
 *
 *   npx tsx bench/lease-renewal.ts   # BENCH_LEASES (1000,10000), BENCH_TICKS (7), BENCH_REDIS_URL, BENCH_BEFORE_DIR
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { Redis } from 'ioredis';
import { median } from './children.js';
import { leasesByScope } from '../server/limits/call-limiter.js';

const LEASES = (process.env.BENCH_LEASES ?? '1000,10000').split(',').map(Number);
const TICKS = Number(process.env.BENCH_TICKS ?? 7);
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const BEFORE_DIR = process.env.BENCH_BEFORE_DIR;
const LEASE_MS = 300_000;
const LIMITS = { maxParallel: 1_000_000, budgetUsd: 1_000_000, budgetPeriod: 'total' as const };

interface ScopeLimits {
  scope: string;
  limits: typeof LIMITS;
}
/** The parts of either checkout's CounterStore this bench uses. */
interface Store {
  admit(request: Record<string, unknown>): Promise<{ admitted: boolean }>;
  renewLeases?(leases: Map<string, string[]>, now: number, leaseMs: number): Promise<void>;
  renew?(scopes: ScopeLimits[], lease: string, now: number, leaseMs: number): Promise<void>;
  close(): Promise<void>;
}

interface Subject {
  name: string;
  store: Store;
  inFlight: Map<string, ScopeLimits[]>;
  samples: { cpuMs: number[]; wallMs: number[]; redisMs: number[]; evalMs: number[]; scripts: number[] };
}

async function open(dir: string, prefix: string): Promise<Store> {
  const { createRedisCounters } = (await import(path.join(dir, 'server/limits/redis-counters.ts'))) as {
    createRedisCounters(options: { url: string; prefix: string }): Store;
  };
  return createRedisCounters({ url: REDIS_URL, prefix });
}

/** Admits `count` calls, each in a key scope (10 calls a key) and a project scope (10 projects). */
async function fill(store: Store, count: number): Promise<Map<string, ScopeLimits[]>> {
  const inFlight = new Map<string, ScopeLimits[]>();
  const now = Date.now();
  const admitted: Array<Promise<{ admitted: boolean }>> = [];
  for (let i = 0; i < count; i++) {
    const scopes = [
      { scope: `key:${Math.floor(i / 10)}`, limits: LIMITS },
      { scope: `project:${i % 10}`, limits: LIMITS },
    ];
    const lease = `req_${i}:${i}`;
    inFlight.set(lease, scopes);
    admitted.push(
      store.admit({ scopes, lease, now, leaseMs: LEASE_MS, tokens: 0, costUsd: 0.001, mediaUnits: 0, spends: true }),
    );
  }
  const results = await Promise.all(admitted);
  if (!results.every((result) => result.admitted)) {
    throw new Error('a bench call was refused');
  }
  return inFlight;
}

/** One tick of the limiter's renewal timer, as each checkout's limiter sends it. */
function tick(subject: Subject): Promise<unknown> {
  const { store, inFlight } = subject;
  const now = Date.now();
  if (store.renewLeases) {
    return store.renewLeases(leasesByScope(inFlight), now, LEASE_MS);
  }
  const sent = [];
  for (const [lease, scopes] of inFlight) {
    sent.push(store.renew!(scopes, lease, now, LEASE_MS));
  }
  return Promise.all(sent);
}

function field(info: string, name: string): number {
  const match = new RegExp(`^${name}:([0-9.]+)`, 'm').exec(info);
  return match ? Number(match[1]) : 0;
}

/** Redis's CPU in ms (user + sys), the EVALSHA time in ms and the EVALSHA count so far. */
async function redisCpu(probe: Redis): Promise<{ cpuMs: number; evalMs: number; scripts: number }> {
  const info = await probe.info('all');
  const stats = /^cmdstat_evalsha:calls=(\d+),usec=(\d+)/m.exec(info);
  return {
    cpuMs: (field(info, 'used_cpu_user') + field(info, 'used_cpu_sys')) * 1000,
    evalMs: stats ? Number(stats[2]) / 1000 : 0,
    scripts: stats ? Number(stats[1]) : 0,
  };
}

async function measure(subject: Subject, probe: Redis): Promise<void> {
  const redisBefore = await redisCpu(probe);
  const cpu = process.cpuUsage();
  const started = performance.now();
  await tick(subject);
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const redisAfter = await redisCpu(probe);
  subject.samples.cpuMs.push((used.user + used.system) / 1000);
  subject.samples.wallMs.push(wallMs);
  subject.samples.redisMs.push(redisAfter.cpuMs - redisBefore.cpuMs);
  subject.samples.evalMs.push(redisAfter.evalMs - redisBefore.evalMs);
  subject.samples.scripts.push(redisAfter.scripts - redisBefore.scripts);
}

const fmt = (values: number[]) =>
  `${median(values).toFixed(1)} (${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)})`;

const probe = new Redis(REDIS_URL);
const prefix = `omnigate-bench:${randomUUID()}:`;
const dirs: Array<[string, string]> = [['after', path.resolve(import.meta.dirname, '..')]];
if (BEFORE_DIR) {
  dirs.push(['before', path.resolve(BEFORE_DIR)]);
}
console.log(
  `| leases | checkout | gateway CPU ms/tick | Redis CPU ms/tick | EVALSHA ms/tick | wall ms/tick | scripts/tick |`,
);
console.log(`|---|---|---|---|---|---|---|`);
for (const count of LEASES) {
  const subjects: Subject[] = [];
  for (const [name, dir] of dirs) {
    const store = await open(dir, `${prefix}${name}:${count}:`);
    const inFlight = await fill(store, count);
    subjects.push({ name, store, inFlight, samples: { cpuMs: [], wallMs: [], redisMs: [], evalMs: [], scripts: [] } });
  }
  // One warm-up tick each (script load, JIT), then the measured ticks, the checkouts alternating.
  for (const subject of subjects) {
    await tick(subject);
  }
  for (let round = 0; round < TICKS; round++) {
    for (const subject of round % 2 === 0 ? subjects : [...subjects].reverse()) {
      await measure(subject, probe);
    }
  }
  for (const { name, samples, store } of subjects) {
    console.log(
      `| ${count} | ${name} | ${fmt(samples.cpuMs)} | ${fmt(samples.redisMs)} | ${fmt(samples.evalMs)} | ${fmt(samples.wallMs)} | ${median(samples.scripts)} |`,
    );
    await store.close();
  }
}
const keys = await probe.keys(`${prefix}*`);
for (let at = 0; at < keys.length; at += 1000) {
  await probe.del(...keys.slice(at, at + 1000));
}
probe.disconnect();
console.log(
  `\nmedian (min–max) of ${TICKS} ticks; load ${(await import('node:os'))
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
