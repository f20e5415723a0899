/**
 * What limits cost: the gateway's CPU µs per chat request at a fixed 1,000 req/s (autocannon's `overallRate`),
 * with limits off, limits on with in-process counters, and limits on with Redis counters (the bench key limited
 * by the config's defaults: rpm, tpm and max_parallel, high enough never to refuse, so every request runs the
 * whole admit and settle path). Same method as bench/observability.ts: gateways side by side, driven one at a
 * time in interleaved rounds whose order turns, a second limits-off gateway as the control.
 *
 * With `BENCH_BEFORE_DIR` (another checkout, built, with `node_modules`), its gateway runs in the same rounds with
 * limits on in process and on Redis: a before/after comparison on one machine at one time.
 *
 *   node scripts/ensure-build.mjs && npx tsx bench/limits.ts   # BENCH_ROUNDS, BENCH_DURATION_S, BENCH_RATE, BENCH_REDIS_URL, BENCH_BEFORE_DIR
 */
import { helpRequested, pinLoadGenerator, printTable, run, runRounds } from './ab-rounds.js';
import { freePort, KEY, LOAD_CORE, startChild, startGateway } from './children.js';

const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const BEFORE_DIR = process.env.BENCH_BEFORE_DIR;
const LIMITS = 'limits:\n  rpm: 100000000\n  tpm: 1000000000000\n  max_parallel: 100000\n';

helpRequested(`What limits cost, CPU µs per chat request: limits off, an identical control, limits on in process and on Redis (see the head of bench/limits.ts and bench/README.md).
  node scripts/ensure-build.mjs && npx tsx bench/limits.ts
  env: BENCH_ROUNDS (5), BENCH_DURATION_S (8), BENCH_RATE (1000), BENCH_REDIS_URL, BENCH_BEFORE_DIR`);

async function main(): Promise<void> {
  pinLoadGenerator();
  const upstreamPort = await freePort();
  const upstream = await startChild('bench/fake-upstream-server.ts', upstreamPort, {}, LOAD_CORE);
  const quiet = { LOG_LEVEL: 'warn' };
  const systems = [
    { name: 'limits off', gateway: await startGateway(upstreamPort, quiet) },
    { name: 'limits off (control, same as off)', gateway: await startGateway(upstreamPort, quiet) },
    { name: 'limits on, in process', gateway: await startGateway(upstreamPort, quiet, undefined, LIMITS) },
    {
      name: 'limits on, Redis',
      gateway: await startGateway(upstreamPort, { ...quiet, OMNIGATE_REDIS_URL: REDIS_URL }, undefined, LIMITS),
    },
  ];
  if (BEFORE_DIR) {
    const before = (env: Record<string, string>) => startGateway(upstreamPort, env, undefined, LIMITS, BEFORE_DIR);
    systems.push(
      { name: 'limits on, in process (before)', gateway: await before(quiet) },
      { name: 'limits on, Redis (before)', gateway: await before({ ...quiet, OMNIGATE_REDIS_URL: REDIS_URL }) },
    );
  }

  // The limited gateways really limit: their answers carry the rate headers.
  for (const { name, gateway } of systems.filter((system) => system.name.startsWith('limits on'))) {
    const answer = await fetch(`http://127.0.0.1:${gateway.port}/v1/models`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    if (answer.headers.get('x-ratelimit-limit-requests') !== '100000000') {
      throw new Error(`${name}: no x-ratelimit headers; limits are not on`);
    }
  }
  const measured = await runRounds(systems);
  printTable(systems, measured, 'off');
  await Promise.all([...systems.map((system) => system.gateway.stop()), upstream.stop()]);
}

run(main);
