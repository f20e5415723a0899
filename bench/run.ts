/**
 * `npm run bench`: what the gateway costs on top of an upstream, measured, not guessed.
 *
 * A fake OpenAI-compatible upstream runs in its own process on loopback; the gateway runs as a child process
 * (`npm start`'s entry point) configured to route to it. autocannon drives each target for a fixed time at
 * a fixed concurrency and we read the gateway's own CPU time from /proc, so the numbers are the gateway's
 * CPU per request, not the load generator's. Scenarios: the upstream directly (baseline); a bare Express app
 * in its own process (the floor any Express service pays on this machine, so the gateway's cost can be read as
 * a multiple of it); chat JSON and SSE through the gateway (native passthrough); Anthropic Messages and Responses
 * streams translated to the chat upstream (CPU per event delivered, as a multiple of passthrough's); the
 * built-in local model; the built-in media engines (bench/media.ts; BENCH_MEDIA=0 skips them); and chat latency
 * beside a busy tokenizer thread (bench/tokenizer-contention.ts); chat beside the background indexing and embedding
 * of a 10 MiB upload (bench/background-embedding.ts; BENCH_EMBED_UPLOAD=0 skips it, BENCH_EMBED_BASELINE=<checkout>
 * runs another build against this one); and max chat req/s with 1 and 2 worker processes (bench/workers.ts;
 * BENCH_WORKERS=0 skips it).
 */
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import autocannon from 'autocannon';
import { benchBackgroundEmbedding, printBackgroundEmbedding } from './background-embedding.js';
import { benchFiles } from './files.js';
import { benchMedia, benchVideo } from './media.js';
import { benchSearch } from './search.js';
import { benchTokenizerContention } from './tokenizer-contention.js';
import { benchUsageInsert } from './usage-insert.js';
import { benchWorkers, workersCaption } from './workers.js';
import { freePort, KEY, LOAD_CORE, median, PIN, SERVER_CORE, startChild, startGateway } from './children.js';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);

function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(fields[11]) + Number(fields[12]); // utime + stime, in clock ticks
}

const CLOCK_TICKS_PER_SECOND = 100;

interface Scenario {
  name: string;
  url: string;
  body: object;
  /** Server process whose CPU to measure; none for the direct baseline. */
  pid?: number;
  /** A stream: its CPU is also reported per event the caller receives. */
  stream?: boolean;
}

/** The events one call of a streamed scenario delivers (frames end with a blank line). */
async function eventsPerCall(scenario: Scenario): Promise<number> {
  const response = await fetch(scenario.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
    body: JSON.stringify(scenario.body),
  });
  const text = await response.text();
  return text.split('\n\n').filter((frame) => frame.trim() !== '').length;
}

async function measure(scenario: Scenario) {
  const before = scenario.pid ? cpuTicks(scenario.pid) : 0;
  const result = await autocannon({
    url: scenario.url,
    method: 'POST',
    connections: CONNECTIONS,
    duration: DURATION_S,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
    body: JSON.stringify(scenario.body),
  });
  const cpuSeconds = scenario.pid ? (cpuTicks(scenario.pid) - before) / CLOCK_TICKS_PER_SECOND : NaN;
  const requests = result.requests.total;
  return {
    reqPerS: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    failed: result.non2xx + result.errors,
    cpuMicros: scenario.pid ? (cpuSeconds * 1e6) / requests : NaN,
  };
}

async function main(): Promise<void> {
  if (PIN) {
    spawnSync('taskset', ['-cp', LOAD_CORE, String(process.pid)]);
  }
  const upstreamPort = await freePort();
  const upstream = await startChild('bench/fake-upstream-server.ts', upstreamPort, {}, LOAD_CORE);
  const gateway = await startGateway(upstreamPort, { LOG_LEVEL: 'warn' });
  const floor = await startChild('bench/express-floor.ts', await freePort(), {});
  const base = `http://127.0.0.1:${gateway.port}`;
  const messages = [{ role: 'user', content: 'Say something about foxes.' }];
  const scenarios: Scenario[] = [
    {
      name: 'upstream directly (baseline), JSON',
      url: `http://127.0.0.1:${upstreamPort}/v1/chat/completions`,
      body: { model: 'bench-model', messages },
    },
    {
      name: 'bare Express 5 JSON app (floor)',
      url: `http://127.0.0.1:${floor.port}/v1/chat/completions`,
      body: { model: 'bench-model', messages },
      pid: floor.pid,
    },
    {
      name: 'gateway → upstream, chat JSON',
      url: `${base}/v1/chat/completions`,
      body: { model: 'bench', messages },
      pid: gateway.pid,
    },
    {
      name: 'gateway → upstream, chat SSE',
      url: `${base}/v1/chat/completions`,
      body: { model: 'bench', messages, stream: true },
      pid: gateway.pid,
      stream: true,
    },
    // Translated streams: the caller's dialect is not the upstream's, so every chunk is decoded and re-encoded.
    {
      name: 'gateway → upstream, Anthropic SSE (translated)',
      url: `${base}/anthropic/v1/messages`,
      body: { model: 'bench', max_tokens: 64, messages, stream: true },
      pid: gateway.pid,
      stream: true,
    },
    {
      name: 'gateway → upstream, Responses SSE (translated)',
      url: `${base}/v1/responses`,
      body: { model: 'bench', input: messages[0].content, stream: true, store: false },
      pid: gateway.pid,
      stream: true,
    },
    {
      name: 'gateway, local model, chat JSON',
      url: `${base}/v1/chat/completions`,
      body: { model: 'local:chat', messages },
      pid: gateway.pid,
    },
    {
      name: 'gateway, local model, Anthropic JSON',
      url: `${base}/anthropic/v1/messages`,
      body: { model: 'local:chat', max_tokens: 64, messages },
      pid: gateway.pid,
    },
  ];
  // Warm-up of every scenario, so JIT, connection pools and the tokenizer are in steady state before measuring.
  for (const scenario of scenarios) {
    await autocannon({
      url: scenario.url,
      method: 'POST',
      connections: CONNECTIONS,
      duration: 1,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: JSON.stringify(scenario.body),
    });
  }
  // Runs interleaved (scenario 1..n, then again), so a slow moment of a shared machine spreads over all of them.
  const results = new Map<string, Awaited<ReturnType<typeof measure>>[]>();
  for (let run = 0; run < RUNS; run += 1) {
    for (const scenario of scenarios) {
      results.set(scenario.name, [...(results.get(scenario.name) ?? []), await measure(scenario)]);
    }
  }
  const events = new Map<string, number>();
  for (const scenario of scenarios.filter((candidate) => candidate.stream)) {
    events.set(scenario.name, await eventsPerCall(scenario));
  }
  const perEvent = (name: string) => median(results.get(name)!.map((r) => r.cpuMicros)) / events.get(name)!;
  const rows = scenarios.map((scenario) => {
    const runs = results.get(scenario.name)!;
    return {
      scenario: scenario.name,
      'req/s': Math.round(median(runs.map((r) => r.reqPerS))),
      'p50 ms': median(runs.map((r) => r.p50)),
      'p99 ms': median(runs.map((r) => r.p99)),
      failed: runs.reduce((sum, r) => sum + r.failed, 0),
      'server CPU µs/req': scenario.pid ? Math.round(median(runs.map((r) => r.cpuMicros))) : '-',
      'events/call': events.get(scenario.name) ?? '-',
      'CPU µs/event': scenario.stream ? Math.round(perEvent(scenario.name)) : '-',
    };
  });
  console.log(
    `\n${RUNS} interleaved runs of ${DURATION_S} s per scenario (medians), ${CONNECTIONS} connections, loopback; ` +
      (PIN
        ? `servers pinned to core ${SERVER_CORE}, load generator and fake upstream to core ${LOAD_CORE}.`
        : 'not pinned (one core or no taskset).') +
      '\nUnlike the shared perf kit, this drives a fixed number of connections as fast as they go (not a fixed rate), so\n' +
      'p99 here is latency under saturation, and CPU µs/req is measured at full load, not at 1,000 req/s.\n',
  );
  console.table(rows);
  const passthrough = perEvent('gateway → upstream, chat SSE');
  for (const name of [
    'gateway → upstream, Anthropic SSE (translated)',
    'gateway → upstream, Responses SSE (translated)',
  ]) {
    console.log(
      `${name}: ${(perEvent(name) / passthrough).toFixed(2)} × the passthrough stream's CPU per event delivered`,
    );
  }
  if (process.env.BENCH_MEDIA !== '0') {
    const sequential = Number(process.env.BENCH_MEDIA_CALLS ?? 10);
    const concurrent = Number(process.env.BENCH_MEDIA_CONCURRENT ?? 8);
    console.log(
      `\nbuilt-in media engines: ${sequential} calls one at a time, then ${concurrent} at once (pool: OMNIGATE_MEDIA_WORKERS, default 1 on 2 cores)\n`,
    );
    console.table(await benchMedia(base, KEY, { sequential, concurrent }));
    console.table([await benchVideo(base, KEY, { tasks: Number(process.env.BENCH_VIDEO_TASKS ?? 3), seconds: 4 })]);
  }
  console.log(
    '\nchat JSON at concurrency 1, the tokenizer thread idle and then busy with count_tokens of a ~390 KB prompt (bench/tokenizer-contention.ts)\n',
  );
  console.table(await benchTokenizerContention(base, KEY));
  const search = await benchSearch();
  console.log(
    `local:search over ${search.passages} passages in ${search.files} files: p50 ${search.p50Ms.toFixed(1)} ms, p99 ${search.p99Ms.toFixed(1)} ms (${search.queries} queries, at the index)`,
  );
  console.log(
    '\nusage records: CPU per row written, batches of 200 into a table of up to 80,000 rows (bench/usage-insert.ts)\n',
  );
  console.table(await benchUsageInsert());
  const upload = await benchFiles(base, KEY);
  console.log(
    `\nPOST /v1/files, one ${Math.round(upload.bytes / 2 ** 20)} MiB file streamed: ${upload.megabytesPerSecond.toFixed(0)} MiB/s (sha256 ${upload.sha256Matches ? 'matches' : 'DIFFERS'})`,
  );
  await gateway.stop();
  await floor.stop();
  await upstream.stop();
  if (process.env.BENCH_EMBED_UPLOAD !== '0') {
    // Issue 34: chat beside the background embedding of a 10 MiB upload (bench/background-embedding.ts).
    console.log('');
    printBackgroundEmbedding(
      await benchBackgroundEmbedding({
        rounds: Number(process.env.BENCH_EMBED_ROUNDS ?? 3),
        baseline: process.env.BENCH_EMBED_BASELINE,
      }),
    );
  }
  if (process.env.BENCH_WORKERS !== '0') {
    // Last, with the other servers stopped: these gateways run unpinned, on every core.
    const options = {
      seconds: DURATION_S,
      runs: RUNS,
      connections: Number(process.env.BENCH_WORKERS_CONNECTIONS ?? 32),
    };
    console.log(`\n${workersCaption(options)}\n`);
    console.table(await benchWorkers(options));
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
