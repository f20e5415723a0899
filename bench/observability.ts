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
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { helpRequested, pinLoadGenerator, printTable, run, runRounds } from './ab-rounds.js';
import { freePort, LOAD_CORE, startChild, startGateway } from './children.js';

const BEFORE_DIR = process.env.BENCH_BEFORE_DIR;

helpRequested(`What metrics and traces cost, CPU µs per chat request: metrics off, an identical control, metrics on, metrics + traces to a loopback collector, traces sampled 10 % (see bench/README.md).
  node scripts/ensure-build.mjs && npx tsx bench/observability.ts
  env: BENCH_ROUNDS (5), BENCH_DURATION_S (8), BENCH_RATE (1000), BENCH_BEFORE_DIR, BENCH_SAMPLED=0`);

async function main(): Promise<void> {
  pinLoadGenerator();
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
  const measured = await runRounds(systems);
  printTable(systems, measured, 'off', `; OTLP bytes received ${spansBytes}`);
  await Promise.all([...systems.map((system) => system.gateway.stop()), upstream.stop()]);
  collector.close();
}

run(main);
