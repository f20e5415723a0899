/**
 * What the retry layer costs on the healthy path (issue 31): the gateway's CPU µs per non-streamed chat request
 * at a fixed rate, for a model on one provider (called directly) and for a model with two deployments (weighted,
 * retries 2, a fallback: every call goes through providers/resilience/), both upstreams the bench's fake. Same
 * method as bench/observability.ts: gateways side by side, interleaved rounds whose order turns, a second
 * single-provider gateway as the control (the noise floor of the ratios).
 *
 *   node scripts/ensure-build.mjs && npx tsx bench/resilience.ts      # BENCH_ROUNDS, BENCH_DURATION_S, BENCH_RATE
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { spawnSync } from 'node:child_process';
import autocannon from 'autocannon';
import { freePort, KEY, LOAD_CORE, median, PIN, startChild, startGateway } from './children.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 8);
const RATE = Number(process.env.BENCH_RATE ?? 1000);

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
  const twoDeployments =
    '  - id: bench\n    deployments:\n      - { provider: fake, model: bench-model, weight: 3 }\n      - { provider: fake2, model: bench-model, weight: 1 }\n    retries: 2\n    fallbacks: [local:chat]\n';
  const systems = [
    { name: 'single provider', gateway: await startGateway(upstreamPort, quiet) },
    { name: 'single provider (control, same)', gateway: await startGateway(upstreamPort, quiet) },
    { name: 'two deployments', gateway: await startGateway(upstreamPort, quiet, twoDeployments) },
  ];
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
  const off = median(results.get('single provider')!);
  process.stdout.write(
    `\n| configuration | CPU µs/req @${RATE} req/s, median (min–max) of ${ROUNDS} | vs single |\n|---|---|---|\n`,
  );
  for (const [name, values] of results) {
    const value = median(values);
    process.stdout.write(
      `| ${name} | ${value.toFixed(0)} (${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)}) | ${name === 'single provider' ? '—' : `${(((value - off) / off) * 100).toFixed(1)} %`} |\n`,
    );
  }
  process.stdout.write(
    `\nper-round ratios to single provider: ${systems
      .slice(1)
      .map(
        (system) =>
          `${system.name}: ${results
            .get(system.name)!
            .map((value, index) => (value / results.get('single provider')![index]).toFixed(3))
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
