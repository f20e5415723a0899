/**
 * The metrics hooks alone, in this process: CPU µs per call of what one answered chat request costs the metrics
 * (`callEnded` with usage, one upstream attempt, the registry's own work), measured with process.cpuUsage over
 * many calls, against the same loop with metrics off (the hooks' no-op path). Independent of the machine's load
 * in a way a whole-server run is not.
 *
 *   npx tsx bench/observability-hooks.ts
 */
import { callEnded, installObserver, startUpstreamAttempt } from '../server/observability/hooks.js';
import { benchOutcome } from './bench-outcome.js';
import { createMetrics } from '../server/observability/metrics.js';

const CALLS = 200_000;
const response = { once: () => undefined } as never;
const signal = new AbortController().signal;

/** Two models in turn, so the metrics keep more than one series. */
const outcome = (i: number) => benchOutcome(i % 2 ? 'fake:bench-model' : 'fake:other');

function run(): number {
  const before = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) {
    startUpstreamAttempt('fake', 'POST', '/chat/completions', signal).end();
    callEnded(outcome(i), response);
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / CALLS;
}

const metrics = createMetrics({
  models: ['fake:bench-model', 'fake:other'],
  providers: ['local', 'fake'],
  perKey: false,
  sources: {},
});
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
process.stdout.write(
  `metrics hooks per request: off ${off.toFixed(3)} µs, on ${on.toFixed(3)} µs (added ${(on - off).toFixed(3)} µs) over ${CALLS} calls × 5 rounds\n`,
);
const before = process.cpuUsage();
for (let i = 0; i < 20; i++) {
  await metrics.render();
}
const scrape = process.cpuUsage(before);
process.stdout.write(`one scrape (render): ${((scrape.user + scrape.system) / 20 / 1000).toFixed(2)} ms CPU\n`);

// The tracing hooks of one traced chat call (server span, request signal, client span with its traceparent,
// the span's attributes and end), export excluded: the batch processor's timer cannot fire inside the loop.
const { startTracing } = await import('../server/observability/tracing.js');
const tracing = startTracing({ serviceName: 'bench', version: '0', traceContent: false });
installObserver('metrics', undefined);
installObserver('tracing', tracing.observer);
const request = {
  method: 'POST',
  url: '/v1/chat/completions',
  headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' },
} as never;
const traced: number[] = [];
for (let round = 0; round < 5; round++) {
  const before = process.cpuUsage();
  for (let i = 0; i < CALLS / 4; i++) {
    const res = { once: () => undefined, req: request } as never;
    const requestSignal = new AbortController().signal;
    tracing.observer.runRequest!(request, res, 'req_1', () => undefined);
    tracing.observer.requestSignal!(requestSignal, res);
    startUpstreamAttempt('fake', 'POST', '/chat/completions', requestSignal).end();
    callEnded(outcome(i), res);
  }
  const used = process.cpuUsage(before);
  traced.push((used.user + used.system) / (CALLS / 4));
}
process.stdout.write(`tracing hooks per request (two spans, export excluded): ${median(traced).toFixed(2)} µs\n`);
await tracing.shutdown().catch(() => undefined);
