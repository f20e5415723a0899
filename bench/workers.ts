/**
 * Max chat req/s with 1 and with 2 worker processes (`OMNIGATE_WORKERS`, `omnigate start --workers`), for the
 * built-in `local:chat` model, non-streamed and streamed. Each gateway runs unpinned (all cores), because
 * spreading over cores is what is measured; the load generator (autocannon, this process) therefore competes
 * with the gateway for the same cores, and its own CPU share is reported beside the figures. Configurations
 * are measured interleaved (1, 2, 1, 2 …) so a busy moment of a shared machine spreads over both.
 *
 * Run alone: `node scripts/ensure-build.mjs && npx tsx bench/workers.ts`; `npm run bench` runs it too.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { freePort, KEY, median } from './children.js';

const CLOCK_TICKS_PER_SECOND = 100;
const START_TIMEOUT_MS = 180_000;

interface Gateway {
  workers: number;
  port: number;
  child: ChildProcess;
}

/** Starts `dist/main.js` with `workers` processes and waits for the primary's line saying all of them listen. */
async function startGateway(workers: number): Promise<Gateway> {
  const port = await freePort();
  const child = spawn(process.execPath, ['dist/main.js'], {
    env: {
      ...process.env,
      PORT: String(port),
      LOG_LEVEL: 'warn',
      OMNIGATE_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'omnigate-bench-workers-')),
      OMNIGATE_API_KEYS: KEY,
      OMNIGATE_WORKERS: String(workers),
      // The primary's 'omnigate listening' is at info; warn keeps the access lines out of the measurement.
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('gateway did not start')), START_TIMEOUT_MS);
    let seen = '';
    child.stdout!.on('data', (piece: Buffer) => {
      seen += piece.toString('utf8');
      // Printed once every worker listens (the welcome text; the JSON line is below LOG_LEVEL=warn).
      if (seen.includes('is serving http://')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`gateway exited with ${code}`)));
  });
  child.stdout!.resume();
  return { workers, port, child };
}

function ticks(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

/** CPU ticks of a process and its children (the cluster's primary and workers). */
function treeTicks(pid: number): number {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  return ticks(pid) + children.reduce((sum, child) => sum + ticks(Number(child)), 0);
}

interface Measured {
  reqPerS: number;
  p99: number;
  failed: number;
  cpuMicros: number;
  /** The load generator's CPU over the run, in cores (1 = one core fully busy). */
  loadCores: number;
}

async function measure(gateway: Gateway, stream: boolean, seconds: number, connections: number): Promise<Measured> {
  const before = treeTicks(gateway.child.pid!);
  const load = process.cpuUsage();
  const result = await autocannon({
    url: `http://127.0.0.1:${gateway.port}/v1/chat/completions`,
    method: 'POST',
    connections,
    duration: seconds,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
    body: JSON.stringify({
      model: 'local:chat',
      messages: [{ role: 'user', content: 'Say something about foxes.' }],
      stream,
    }),
  });
  const used = process.cpuUsage(load);
  const cpuSeconds = (treeTicks(gateway.child.pid!) - before) / CLOCK_TICKS_PER_SECOND;
  return {
    reqPerS: result.requests.average,
    p99: result.latency.p99,
    // autocannon counts a call unanswered after its 10 s timeout apart from the errors.
    failed: result.non2xx + result.errors + result.timeouts,
    cpuMicros: (cpuSeconds * 1e6) / Math.max(1, result.requests.total),
    loadCores: (used.user + used.system) / 1e6 / seconds,
  };
}

export interface WorkersRow {
  workers: number;
  call: string;
  'req/s': number;
  'p99 ms': number;
  failed: number;
  'gateway CPU µs/req': number;
  'load generator cores': number;
}

export async function benchWorkers(
  options: { seconds?: number; runs?: number; connections?: number } = {},
): Promise<WorkersRow[]> {
  const seconds = options.seconds ?? 5;
  const runs = options.runs ?? 3;
  const connections = options.connections ?? 32;
  const gateways = [await startGateway(1), await startGateway(2)];
  const calls = [
    { call: 'local:chat JSON', stream: false },
    { call: 'local:chat SSE', stream: true },
  ];
  const results = new Map<string, Measured[]>();
  try {
    for (const gateway of gateways) {
      for (const { stream } of calls) {
        await measure(gateway, stream, 1, connections); // warm-up: JIT and tokenizer thread in every worker
      }
    }
    for (let run = 0; run < runs; run += 1) {
      for (const gateway of gateways) {
        for (const { call, stream } of calls) {
          const name = `${gateway.workers}|${call}`;
          results.set(name, [...(results.get(name) ?? []), await measure(gateway, stream, seconds, connections)]);
        }
      }
    }
  } finally {
    for (const gateway of gateways) {
      gateway.child.kill('SIGTERM');
    }
  }
  return calls.flatMap(({ call }) =>
    gateways.map(({ workers }) => {
      const measured = results.get(`${workers}|${call}`)!;
      return {
        workers,
        call,
        'req/s': Math.round(median(measured.map((m) => m.reqPerS))),
        'p99 ms': median(measured.map((m) => m.p99)),
        failed: measured.reduce((sum, m) => sum + m.failed, 0),
        'gateway CPU µs/req': Math.round(median(measured.map((m) => m.cpuMicros))),
        'load generator cores': Number(median(measured.map((m) => m.loadCores)).toFixed(2)),
      };
    }),
  );
}

/** The header line of the table, saying what the figures are and what they share. */
export function workersCaption(options: { seconds: number; runs: number; connections: number }): string {
  return (
    `max chat req/s with 1 and 2 worker processes (OMNIGATE_WORKERS): ${options.runs} interleaved runs of ` +
    `${options.seconds} s (medians), ${options.connections} connections, unpinned on ${availableParallelism()} cores ` +
    'shared with the load generator'
  );
}

if (process.argv[1] && import.meta.url.endsWith(path.basename(process.argv[1]))) {
  const options = {
    seconds: Number(process.env.BENCH_DURATION_S ?? 5),
    runs: Number(process.env.BENCH_RUNS ?? 3),
    connections: Number(process.env.BENCH_WORKERS_CONNECTIONS ?? 32),
  };
  console.log(`\n${workersCaption(options)}\n`);
  console.table(await benchWorkers(options));
}
