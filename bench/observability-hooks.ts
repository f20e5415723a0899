/**
 * The metrics hooks alone, in this process: CPU µs per call of what one answered chat request costs the metrics
 * (`callEnded` with usage, one upstream attempt, the registry's own work), measured with process.cpuUsage over
 * many calls, against the same loop with metrics off (the hooks' no-op path). Independent of the machine's load
 * in a way a whole-server run is not.
 *
 *   npx tsx bench/observability-hooks.ts
 */
import { callEnded, installObserver, startUpstreamAttempt, type CallOutcome } from '../server/observability/hooks.js';
import { createMetrics } from '../server/observability/metrics.js';

const CALLS = 200_000;
const response = { once: () => undefined } as never;
const signal = new AbortController().signal;

function outcome(i: number): CallOutcome {
  const start = performance.now();
  return {
    operation: 'createChatCompletion', modelRequested: 'bench', model: i % 2 ? 'fake:bench-model' : 'fake:other', provider: 'fake',
    usage: { inputTokens: 12, outputTokens: 30, cacheReadTokens: 0, reasoningTokens: 0 } as never,
    units: null, media: null, status: 200, startedAt: start - 1.2, headAt: start - 0.4, errorCode: undefined, keyId: 'key_1',
  };
}

function run(): number {
  const before = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) {
    startUpstreamAttempt('fake', 'POST', '/chat/completions', signal).end();
    callEnded(outcome(i), response);
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / CALLS;
}

const metrics = createMetrics({ models: ['fake:bench-model', 'fake:other'], providers: ['local', 'fake'], perKey: false, sources: {} });
const rows: Array<[string, number]> = [];
for (let round = 0; round < 5; round++) {
  installObserver('metrics', undefined);
  rows.push(['off', run()]);
  installObserver('metrics', metrics.observer);
  rows.push(['on', run()]);
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const off = median(rows.filter(([name]) => name === 'off').map(([, value]) => value));
const on = median(rows.filter(([name]) => name === 'on').map(([, value]) => value));
process.stdout.write(`metrics hooks per request: off ${off.toFixed(3)} µs, on ${on.toFixed(3)} µs (added ${(on - off).toFixed(3)} µs) over ${CALLS} calls × 5 rounds\n`);
const before = process.cpuUsage();
for (let i = 0; i < 20; i++) {
  await metrics.render();
}
const scrape = process.cpuUsage(before);
process.stdout.write(`one scrape (render): ${((scrape.user + scrape.system) / 20 / 1000).toFixed(2)} ms CPU\n`);
