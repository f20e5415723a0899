/**
 * The call limiter's own CPU per call, without HTTP: `begin` (admission) and the call's end (settlement) of
 * BENCH_CALLS calls in waves of 64 at once (as 64 connections would), against the in-process counters and against
 * Redis, with the bench's limits (rpm, tpm, max_parallel high enough never to refuse). CPU is this process's
 * (user + system, `process.cpuUsage`), which includes ioredis encoding commands and decoding replies, not Redis's.
 * With BENCH_BEFORE_DIR (another checkout with `node_modules`), its limiter runs in the same process, in rounds
 * interleaved with this one's, so both see the same machine load.
 *
 *   npx tsx bench/limiter-cost.ts   # BENCH_ROUNDS (5), BENCH_CALLS (20000), BENCH_REDIS_URL, BENCH_BEFORE_DIR
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { pino } from 'pino';
import { median } from './children.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CALLS = Number(process.env.BENCH_CALLS ?? 20_000);
const WAVE = Number(process.env.BENCH_WAVE ?? 64);
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const BEFORE_DIR = process.env.BENCH_BEFORE_DIR;
const LIMITS = { rpm: 100_000_000, tpm: 1_000_000_000_000, maxParallel: 100_000 };

type Listener = (facts: Record<string, unknown> & { status: number }, cost: number) => number | undefined;
interface Limiter {
  begin(input: Record<string, unknown>): Promise<void> | undefined;
}
interface Opened {
  limiter: Limiter;
  close(): Promise<void>;
}

async function open(dir: string, redisUrl: string | undefined, prefix: string): Promise<Opened> {
  const { openLimits } = (await import(path.join(dir, 'server/limits/open-limits.ts'))) as {
    openLimits(input: Record<string, unknown>): Opened;
  };
  return openLimits({
    settings: { defaults: {}, onStoreDown: 'deny', leaseMs: 300_000, redisUrl },
    prices: {},
    registry: {
      find: () => undefined,
      list: () => [],
      resolve: () => {
        throw new Error('unpriced');
      },
    },
    providerUrls: {},
    logger: pino({ level: 'silent' }),
    source: { limitsFor: () => ({ key: LIMITS }) },
    redisPrefix: prefix,
  });
}

const body = { model: 'bench', messages: [{ role: 'user', content: 'Say something about foxes.' }] };
const key = { id: 'bench-key' };

/** CPU µs per call of CALLS calls, begun 64 at a time and ended once all 64 are admitted. */
async function run(limiter: Limiter): Promise<number> {
  const start = process.cpuUsage();
  for (let done = 0; done < CALLS; done += WAVE) {
    const listeners: Listener[] = [];
    const admitted = [];
    for (let i = 0; i < WAVE; i++) {
      const call = {
        operation: 'createChatCompletion',
        whenEnded: (listener: Listener) => listeners.push(listener),
      };
      admitted.push(
        limiter.begin({
          key,
          call,
          operation: 'createChatCompletion',
          body,
          bodyBytes: 80,
          requestId: `req_${done + i}`,
          setHeader: () => undefined,
        }),
      );
    }
    await Promise.all(admitted);
    const facts = {
      operation: 'createChatCompletion',
      modelRequested: 'bench',
      model: 'fake:bench-model',
      provider: 'fake',
      usage: { inputTokens: 20, outputTokens: 40 },
      units: null,
      media: null,
      status: 200,
    };
    for (const listener of listeners) {
      listener(facts, 0);
    }
    // Let this wave's settlements go out before the next wave, as ended requests would.
    await new Promise((resolve) => setImmediate(resolve));
  }
  // Settlements still in flight finish inside the measurement.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const used = process.cpuUsage(start);
  return (used.user + used.system) / CALLS;
}

async function main(): Promise<void> {
  const here = path.resolve(import.meta.dirname, '..');
  const prefix = `omnigate-bench:${randomUUID()}:`;
  const variants: Array<{ name: string; opened: Opened }> = [];
  for (const [label, dir] of [['this checkout', here], ...(BEFORE_DIR ? [['before', BEFORE_DIR]] : [])] as const) {
    variants.push({ name: `in process, ${label}`, opened: await open(dir, undefined, prefix) });
    variants.push({ name: `Redis, ${label}`, opened: await open(dir, REDIS_URL, `${prefix}${label}:`) });
  }
  const results = new Map<string, number[]>(variants.map(({ name }) => [name, []]));
  for (let round = 0; round <= ROUNDS; round++) {
    const order = variants.map((_, index) => variants[(index + round) % variants.length]!);
    for (const { name, opened } of order) {
      const micros = await run(opened.limiter);
      if (round > 0) {
        results.get(name)!.push(micros);
        process.stdout.write(`round ${round} ${name}: ${micros.toFixed(1)} µs/call\n`);
      }
    }
  }
  process.stdout.write(
    `\n| limiter | CPU µs per call (admit + settle), median (min–max) of ${ROUNDS} × ${CALLS} |\n|---|---|\n`,
  );
  for (const [name, values] of results) {
    process.stdout.write(
      `| ${name} | ${median(values).toFixed(1)} (${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)}) |\n`,
    );
  }
  await Promise.all(variants.map(({ opened }) => opened.close()));
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
