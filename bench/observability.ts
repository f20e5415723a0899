/**
 * What metrics and traces cost: the gateway's CPU µs per chat request at a fixed 1,000 req/s (autocannon's
 * `overallRate`), with metrics off, metrics on (an admin key set), and metrics plus traces exported to a
 * collector on loopback. The gateways run side by side (pinned to the server core when `taskset` exists)
 * and are driven one at a time in interleaved rounds whose order turns each round, so drift on a shared machine
 * hits all alike; a second metrics-off gateway is the control (what two equal systems read apart).
 *
 * `BENCH_SAMPLED=0` leaves out the gateway that samples 10 % of traces. Traces go out in the gateway's default encoding (OTLP/HTTP protobuf). With `BENCH_BEFORE_DIR` (another checkout,
 * built, with `node_modules`), its gateway with traces on runs in the same rounds too, for a before/after.
 *
 *   node scripts/ensure-build.mjs && npx tsx bench/observability.ts      # BENCH_ROUNDS, BENCH_DURATION_S, BENCH_RATE, BENCH_BEFORE_DIR, BENCH_SAMPLED=0
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { spawnSync } from 'node:child_process';
import autocannon from 'autocannon';
import { freePort, KEY, LOAD_CORE, median, PIN, startChild, startGateway } from './children.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 8);
const RATE = Number(process.env.BENCH_RATE ?? 1000);
const BEFORE_DIR = process.env.BENCH_BEFORE_DIR;

function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

async function main(): Promise<void> {
  if (PIN) {
    spawnSync('taskset', ['-cp', LOAD_CORE, String(process.pid)]);
  }
  // The OTLP collector: reads each export and answers 200, in this (load-core) process.
  let spansBytes = 0;
  const collector = createServer((req, res) => {
    req.on('data', (piece: Buffer) => {
      spansBytes += piece.length;
    });
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  const collectorUrl = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;

  const upstreamPort = await freePort();
  const upstream = await startChild('bench/fake-upstream-server.ts', upstreamPort, {}, LOAD_CORE);
  const quiet = { LOG_LEVEL: 'warn' };
  const systems = [
    { name: 'metrics off', gateway: await startGateway(upstreamPort, quiet) },
    // A second, identical gateway: how far two equal systems read apart here (the noise floor of the ratios).
    { name: 'metrics off (control, same as off)', gateway: await startGateway(upstreamPort, quiet) },
    {
      name: 'metrics on',
      gateway: await startGateway(upstreamPort, { ...quiet, OMNIGATE_ADMIN_KEY: 'bench-admin-key-0123456789' }),
    },
    {
      name: 'metrics on + traces (OTLP to loopback)',
      gateway: await startGateway(upstreamPort, {
        ...quiet,
        OMNIGATE_ADMIN_KEY: 'bench-admin-key-0123456789',
        OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl,
      }),
    },
  ];
  if (process.env.BENCH_SAMPLED !== '0') {
    systems.push({
      name: 'metrics on + traces sampled 10 %',
      gateway: await startGateway(upstreamPort, {
        ...quiet,
        OMNIGATE_ADMIN_KEY: 'bench-admin-key-0123456789',
        OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl,
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.1',
      }),
    });
  }
  if (BEFORE_DIR) {
    systems.push({
      name: `metrics on + traces, before (${BEFORE_DIR})`,
      gateway: await startGateway(
        upstreamPort,
        {
          ...quiet,
          OMNIGATE_ADMIN_KEY: 'bench-admin-key-0123456789',
          OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl,
        },
        undefined,
        undefined,
        BEFORE_DIR,
      ),
    });
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
  const off = median(results.get('metrics off')!);
  process.stdout.write(
    `\n| configuration | CPU µs/req @${RATE} req/s, median (min–max) of ${ROUNDS} | vs off |\n|---|---|---|\n`,
  );
  for (const [name, values] of results) {
    const value = median(values);
    process.stdout.write(
      `| ${name} | ${value.toFixed(0)} (${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)}) | ${name === 'metrics off' ? '—' : `${(((value - off) / off) * 100).toFixed(1)} %`} |\n`,
    );
  }
  process.stdout.write(
    `\nper-round ratios to off: ${systems
      .slice(1)
      .map(
        (system) =>
          `${system.name}: ${results
            .get(system.name)!
            .map((value, index) => (value / results.get('metrics off')![index]).toFixed(3))
            .join(', ')}`,
      )
      .join('; ')}\n`,
  );
  process.stdout.write(
    `load average (1 min) during the rounds: ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)} on ${PIN ? 'pinned' : 'unpinned'} cores; OTLP bytes received ${spansBytes}\n`,
  );
  await Promise.all([...systems.map((system) => system.gateway.stop()), upstream.stop()]);
  collector.close();
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
