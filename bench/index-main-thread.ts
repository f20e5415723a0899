/**
 * Issue 34: what indexing a 10 MiB text file costs the main thread, with the passages written by the extraction
 * worker on its own SQLite connection (a database file: what the gateway runs) against the same passages written
 * by the main thread's paced writer (what the gateway did before, and still does for PostgreSQL and in-memory
 * databases: the same store with its `databaseFile` hidden). In process, no chat load: the main thread's CPU
 * (/proc/thread-self/schedstat) from the upload's read to the file's `indexed`, the whole process's CPU (the
 * worker's included) and the wall time; then, in a second indexing with a 1 ms timer reading the thread's CPU at each
 * turn (as test/helpers/cpu-time.ts does), the longest stretch of CPU between two turns of the event loop and the
 * event loop's longest delay (perf_hooks).
 * `BENCH_INDEX_ROUNDS` rounds (default 3), the two variants alternating first, each on a fresh database file.
 *
 *   node --expose-gc --import tsx bench/index-main-thread.ts
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { createLocalSearchIndex } from '../server/providers/local/search-index.js';
import { openDatabase } from '../server/storage/database.js';
import { createPassageStore } from '../server/storage/passage-store.js';
import { median } from './children.js';

const UPLOAD_BYTES = 10 * 1024 * 1024;
const ROUNDS = Number(process.env.BENCH_INDEX_ROUNDS ?? 3);
const words = 'lighthouse keeper lamp wick reef ship harbour night storm beam lens tide rope anchor gull'.split(' ');
const threadCpuMs = () => Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
const processCpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/** ~10 MiB of log-like text, different each round (as bench/background-embedding.ts uploads). */
function upload(round: number): Buffer {
  const lines: string[] = [];
  let size = 0;
  for (let line = 0; size < UPLOAD_BYTES; line++) {
    const text = `Round ${round} log ${line}: ${words[(line * 5 + round) % words.length]} ${words[(line * 11) % words.length]} near the ${words[(line * 3 + 1) % words.length]}, entry ${line * 7 + round}.`;
    lines.push(text);
    size += text.length + 1;
  }
  return Buffer.from(lines.join('\n').slice(0, UPLOAD_BYTES));
}

const file = (id: string, bytes: Buffer) => ({
  id,
  keyId: 'key_1',
  filename: `${id}.txt`,
  mediaType: 'text/plain',
  bytes: bytes.length,
  open: async () => Readable.from([bytes]),
});

interface Sample {
  mainCpuMs: number;
  longestHoldMs: number;
  loopDelayMaxMs: number;
  processCpuMs: number;
  wallMs: number;
  passages: number;
}

/**
 * One indexing of a fresh 10 MiB file on a fresh database. With `probe`, the 1 ms timer reads the thread's CPU at
 * each turn (`longestHoldMs`); without, it does not run: at ~40 µs a read, its thousands of reads would be most of
 * the worker variant's main-thread CPU, so the CPU is taken from a run without it.
 */
async function measure(variant: 'worker' | 'main thread', round: number, probe: boolean): Promise<Sample> {
  const directory = mkdtempSync(path.join(tmpdir(), 'omnigate-bench-index-'));
  const db = openDatabase(path.join(directory, 'omnigate.sqlite'));
  const store = createPassageStore(db);
  const passages = variant === 'worker' ? store : { ...store, databaseFile: undefined };
  const index = createLocalSearchIndex({ passages });
  try {
    // The worker started (and, for the worker variant, its connection opened) before the measured file.
    await index.add(file('f_warm', Buffer.from('A warm-up note about the harbour.')));
    const bytes = upload(round);
    // The upload's making leaves ~10 MB of strings behind: collected now (node --expose-gc), not in the window.
    (globalThis as { gc?: () => void }).gc?.();
    let last = threadCpuMs();
    let longestHoldMs = 0;
    const timer = probe
      ? setInterval(() => {
          const now = threadCpuMs();
          longestHoldMs = Math.max(longestHoldMs, now - last);
          last = now;
        }, 1)
      : undefined;
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    const cpuBefore = threadCpuMs();
    const processBefore = processCpuMs();
    const started = performance.now();
    const state = await index.add(file(`f_${round}`, bytes));
    const wallMs = performance.now() - started;
    const mainCpuMs = threadCpuMs() - cpuBefore;
    const processUsed = processCpuMs() - processBefore;
    longestHoldMs = probe ? Math.max(longestHoldMs, threadCpuMs() - last) : Number.NaN;
    clearInterval(timer);
    delay.disable();
    if (state.status !== 'indexed') {
      throw new Error(`not indexed: ${JSON.stringify(state)}`);
    }
    return {
      mainCpuMs,
      longestHoldMs,
      loopDelayMaxMs: delay.max / 1e6,
      processCpuMs: processUsed,
      wallMs,
      passages: await store.count('key_1'),
    };
  } finally {
    await index.close();
    db.close();
    rmSync(directory, { recursive: true, force: true });
  }
}

const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const variants = ['worker', 'main thread'] as const;
const samples = new Map<string, Sample[]>(variants.map((variant) => [variant, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const variant of round % 2 === 0 ? variants : [...variants].reverse()) {
    const plain = await measure(variant, round, false);
    const probed = await measure(variant, round, true);
    const sample = { ...plain, longestHoldMs: probed.longestHoldMs, loopDelayMaxMs: probed.loopDelayMaxMs };
    samples.get(variant)!.push(sample);
    console.log(
      `round ${round + 1} ${variant}: main CPU ${sample.mainCpuMs.toFixed(0)} ms, longest hold ${sample.longestHoldMs.toFixed(1)} ms, loop delay max ${sample.loopDelayMaxMs.toFixed(1)} ms, process CPU ${sample.processCpuMs.toFixed(0)} ms, wall ${sample.wallMs.toFixed(0)} ms, ${sample.passages} passages; load ${loadAverage()}`,
    );
  }
}
const cell = (values: number[], digits = 0) =>
  `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`;
console.table(
  variants.map((variant) => {
    const done = samples.get(variant)!;
    return {
      'passages written by': variant,
      'main-thread CPU ms': cell(done.map((sample) => sample.mainCpuMs)),
      'longest hold ms': cell(
        done.map((sample) => sample.longestHoldMs),
        1,
      ),
      'loop delay max ms': cell(
        done.map((sample) => sample.loopDelayMaxMs),
        1,
      ),
      'process CPU ms': cell(done.map((sample) => sample.processCpuMs)),
      'wall ms': cell(done.map((sample) => sample.wallMs)),
    };
  }),
);
