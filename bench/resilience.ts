/**
 * What the retry layer costs on the healthy path (issue 31): the gateway's CPU µs per non-streamed chat request
 * at a fixed rate, for a model on one provider (called directly) and for a model with two deployments (weighted,
 * retries 2, a fallback: every call goes through providers/resilience/), both upstreams the bench's fake. Same
 * method as bench/observability.ts: gateways side by side, interleaved rounds whose order turns, a second
 * single-provider gateway as the control (the noise floor of the ratios).
 *
 *   node scripts/ensure-build.mjs && npx tsx bench/resilience.ts      # BENCH_ROUNDS, BENCH_DURATION_S, BENCH_RATE
 */
import { helpRequested, pinLoadGenerator, printTable, run, runRounds } from './ab-rounds.js';
import { freePort, LOAD_CORE, startChild, startGateway } from './children.js';

helpRequested(`What the retry layer costs on the healthy path, CPU µs per chat request: one provider, an identical control, a model with two deployments (see bench/README.md).
  node scripts/ensure-build.mjs && npx tsx bench/resilience.ts
  env: BENCH_ROUNDS (5), BENCH_DURATION_S (8), BENCH_RATE (1000)`);

async function main(): Promise<void> {
  pinLoadGenerator();
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
  const measured = await runRounds(systems);
  printTable(systems, measured, 'single');
  await Promise.all([...systems.map((system) => system.gateway.stop()), upstream.stop()]);
}

run(main);
