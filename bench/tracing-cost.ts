/**
 * What tracing costs per request in this process, export included: the tracing hooks of one traced chat call
 * (server span, request signal, client span with its `traceparent`, GenAI attributes, end) and the batch
 * processor's export of both spans over OTLP/HTTP to a collector in a child process on loopback (its CPU is not
 * counted here). Requests run in waves of 100 with an event-loop turn between waves so the exports go out as they
 * would in a server; the CPU (process.cpuUsage, user + system) covers the waves and the final flush.
 * `BENCH_TRACING_BEFORE=path/to/tracing.ts` measures another version of server/observability/tracing.ts in the
 * same rounds (interleaved), for a before/after.
 *
 *   npx tsx bench/tracing-cost.ts       # BENCH_REQUESTS (20,000 a round), BENCH_ROUNDS (5)
 */
import { spawn } from 'node:child_process';
import { setImmediate as turn } from 'node:timers/promises';
import { callEnded, installObserver, startUpstreamAttempt } from '../server/observability/hooks.js';
import { benchOutcome } from './bench-outcome.js';
import type { TracingOptions, Tracing } from '../server/observability/tracing.js';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

const collector = spawn(
  process.execPath,
  [
    '-e',
    `let n=0;const s=require('node:http').createServer((q,r)=>{q.on('data',b=>{n+=b.length});q.on('end',()=>r.writeHead(200,{'content-type':'application/json'}).end('{}'))});
     s.listen(0,'127.0.0.1',()=>console.log(s.address().port));process.on('SIGTERM',()=>{console.log(n);process.exit(0)});`,
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const lines: string[] = [];
collector.stdout.setEncoding('utf8').on('data', (text: string) => lines.push(...text.trim().split('\n')));
while (lines.length === 0) {
  await new Promise((resolve) => setTimeout(resolve, 20));
}
process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${lines[0]}`;

type Start = (options: TracingOptions) => Tracing;
const current = (await import('../server/observability/tracing.js')).startTracing;
/** Each version with the OTLP encoding it exports in (`OTEL_EXPORTER_OTLP_PROTOCOL`). */
const versions: Array<[string, Start, string]> = [
  ['this checkout, http/protobuf', current, 'http/protobuf'],
  ['this checkout, http/json', current, 'http/json'],
];
if (process.env.BENCH_TRACING_BEFORE) {
  const before = (await import(process.env.BENCH_TRACING_BEFORE)) as { startTracing: Start };
  versions.push(['before, http/json', before.startTracing, 'http/json']);
}

async function run(start: Start, protocol: string): Promise<number> {
  process.env.OTEL_EXPORTER_OTLP_PROTOCOL = protocol;
  const tracing = start({ serviceName: 'bench', version: '0', traceContent: false });
  installObserver('tracing', tracing.observer);
  const observer = tracing.observer;
  const before = process.cpuUsage();
  for (let i = 0; i < REQUESTS; i++) {
    const request = { method: 'POST', url: '/v1/chat/completions', headers: {} };
    const res = { once: () => undefined, req: request } as never;
    const signal = new AbortController().signal;
    observer.runRequest!(request as never, res, `req_${i}`, () => undefined);
    observer.requestSignal!(signal, res);
    startUpstreamAttempt('fake', 'POST', '/chat/completions', signal).end();
    callEnded(benchOutcome(), res);
    if (i % 100 === 99) {
      await turn();
    }
  }
  await tracing.shutdown();
  const used = process.cpuUsage(before);
  installObserver('tracing', undefined);
  return (used.user + used.system) / REQUESTS;
}

const results = new Map<string, number[]>(versions.map(([name]) => [name, []]));
for (let round = 0; round < ROUNDS + 1; round++) {
  // The order turns each round.
  for (let index = 0; index < versions.length; index++) {
    const [name, start, protocol] = versions[(index + round) % versions.length];
    const micros = await run(start, protocol);
    if (round > 0) results.get(name)!.push(micros); // round 0 warms up
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
for (const [name, values] of results) {
  process.stdout.write(
    `tracing per request, export included (${name}): median ${median(values).toFixed(1)} µs (${values.map((v) => v.toFixed(1)).join(', ')})\n`,
  );
}
collector.kill('SIGTERM');
await new Promise((resolve) => collector.once('exit', resolve));
process.stdout.write(`OTLP bytes received: ${lines[1]}\n`);
