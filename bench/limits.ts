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
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { spawnSync } from 'node:child_process';
import autocannon from 'autocannon';
import { freePort, KEY, LOAD_CORE, median, PIN, startChild, startGateway } from './children.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 8);
const RATE = Number(process.env.BENCH_RATE ?? 1000);
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const BEFORE_DIR = process.env.BENCH_BEFORE_DIR;
const LIMITS = 'limits:\n  rpm: 100000000\n  tpm: 1000000000000\n  max_parallel: 100000\n';

function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

async function main(): Promise<void> {
  if (PIN) {
    spawnSync('taskset', ['-cp', LOAD_CORE, String(process.pid)]);
  }
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
  const results = new Map<string, number[]>(systems.map((system) => [system.name, []]));
  const loads: number[] = [];
  const body = JSON.stringify({ model: 'bench', messages: [{ role: 'user', content: 'Say something about foxes.' }] });
  for (let round = 0; round < ROUNDS + 1; round++) {
    // The order turns each round, so no configuration always follows the same one.
    const order = systems.map((_, index) => systems[(index + round) % systems.length]);
    for (const { name, gateway } of order) {
      const before = cpuTicks(gateway.pid);
      const result = await autocannon({
        url: `http://127.0.0.1:${gateway.port}/v1/chat/completions`,
        method: 'POST',
        connections: 64,
        overallRate: RATE,
        duration: round === 0 ? 2 : DURATION_S, // round 0 warms every gateway up and is not recorded
        headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
        body,
      });
      const micros = (((cpuTicks(gateway.pid) - before) / 100) * 1e6) / result.requests.total;
      if (result.non2xx + result.errors > 0) {
        throw new Error(`${name}: ${result.non2xx} non-2xx, ${result.errors} errors`);
      }
      if (round > 0) {
        results.get(name)!.push(micros);
        loads.push(loadavg()[0]);
        process.stdout.write(
          `round ${round} ${name}: ${micros.toFixed(0)} µs/req, ${result.requests.average.toFixed(0)} req/s, p99 ${result.latency.p99} ms, load ${loadavg()[0].toFixed(1)}\n`,
        );
      }
    }
  }
  const off = median(results.get('limits off')!);
  process.stdout.write(
    `\n| configuration | CPU µs/req @${RATE} req/s, median (min–max) of ${ROUNDS} | vs off |\n|---|---|---|\n`,
  );
  for (const [name, values] of results) {
    const value = median(values);
    process.stdout.write(
      `| ${name} | ${value.toFixed(0)} (${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)}) | ${name === 'limits off' ? '—' : `${(((value - off) / off) * 100).toFixed(1)} %`} |\n`,
    );
  }
  process.stdout.write(
    `\nper-round ratios to off: ${systems
      .slice(1)
      .map(
        (system) =>
          `${system.name}: ${results
            .get(system.name)!
            .map((value, index) => (value / results.get('limits off')![index]).toFixed(3))
            .join(', ')}`,
      )
      .join('; ')}\n`,
  );
  process.stdout.write(
    `load average (1 min) during the rounds: ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)} on ${PIN ? 'pinned' : 'unpinned'} cores\n`,
  );
  await Promise.all([...systems.map((system) => system.gateway.stop()), upstream.stop()]);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
