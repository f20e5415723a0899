/**
 * Issue 34's second budget: the background embedding of a 10 MB upload (semantic search with `search.embedding_model:
 * local:embed`) must not delay chat calls. A real gateway (`dist/main.js`, its event loop pinned to the server core)
 * routes chat to the fake upstream; this process (pinned, every thread, to the load core beside the fake upstream)
 * calls it at a steady rate (open loop, `BENCH_EMBED_RATE`, 400 a second) and times each call from its scheduled start.
 * A round is a fresh gateway: a warm-up (5 s of chat, and one small upload read back, so that the files routes have
 * compiled their validators; not measured), then BENCH_EMBED_CYCLES (2) times a quiet phase (5 s, no upload) and an
 * upload phase (a fresh 10 MiB text file uploaded; chat goes on, untimed, while the upload call receives and stores the
 * bytes, the foreground part; then it is timed from the upload's answer until the file is indexed and every passage has
 * its vector, read from the gateway's SQLite file), then a last quiet phase. Each upload is judged against the mean of
 * the two quiet phases on either side of it on the same warm gateway (calls/s, p50, p99, the gateway main thread's CPU
 * a call), and the two quiet phases against each other say how much the machine moved meanwhile.
 *
 * Every thread of the gateway (its event loop, the extraction and background embedding workers, the tokenizer) is
 * on the server core, as in the other gateway rows: the background threads get what their niceness lets them take
 * from the event loop. (Moving them to the load core instead was tried: they then slowed the callers and the fake
 * upstream, which are on every call's path, and chat read slower, not faster.)
 *
 * A/B: with `BENCH_EMBED_BASELINE=<checkout>` (another worktree with its own `dist/`, e.g. the commit before a
 * change) every round runs the baseline and this checkout one after the other, the order alternating by round,
 * so the machine's drift hits both alike. `BENCH_EMBED_ROUNDS` rounds (default 3).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { freePort, KEY, LOAD_CORE, PIN, SERVER_CORE, startChild, startGateway } from './children.js';
import { percentile } from './percentile.js';

/**
 * Chat calls a second (`BENCH_EMBED_RATE`): a steady load the gateway's core serves with room to spare (it
 * saturates near 1,700 a second here), so that the question is whether the upload slows the answers.
 */
const CHAT_RATE = Number(process.env.BENCH_EMBED_RATE ?? 400);
const UPLOAD_BYTES = 10 * 1024 * 1024;
const QUIET_MS = 5_000;
const WARM_UP_MS = 5_000;
/** Uploads per gateway, each between two quiet phases. */
const CYCLES = Number(process.env.BENCH_EMBED_CYCLES ?? 2);
const words = 'lighthouse keeper lamp wick reef ship harbour night storm beam lens tide rope anchor gull'.split(' ');
const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

/** ~10 MB of prose-like text, different each round (its passages are new to the index). */
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

interface Phase {
  latencies: number[];
  seconds: number;
  /** CPU time of the gateway's main thread over the phase (ms; /proc schedstat, the thread whose id is the pid). */
  mainCpuMs: number;
}

/** Nanoseconds the gateway's main thread has run on a CPU, in ms (NaN off Linux). */
function mainThreadCpuMs(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return Number.NaN;
  }
}

/**
 * Chat at CHAT_RATE calls a second, open loop: each call starts on its schedule whether or not the ones before it
 * have answered, and its latency counts from its scheduled start, so a stall of the gateway shows in full (no
 * caller waits out the stall and so hides it) and "delay" means the same thing in every phase: a slower answer
 * at the same load.
 */
async function chatLoad(base: string, pid: number, until: () => boolean | Promise<boolean>): Promise<Phase> {
  const latencies: number[] = [];
  const cpuBefore = mainThreadCpuMs(pid);
  const body = JSON.stringify({ model: 'bench', messages: [{ role: 'user', content: 'Say something about foxes.' }] });
  const started = performance.now();
  let stop = false;
  const watcher = (async () => {
    while (!(await until())) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    stop = true;
  })();
  const calls = new Set<Promise<void>>();
  const call = async (scheduled: number) => {
    const response = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body,
    });
    await response.arrayBuffer();
    if (response.ok) {
      latencies.push(performance.now() - scheduled);
    }
  };
  const interval = 1000 / CHAT_RATE;
  let next = started;
  while (!stop) {
    for (const now = performance.now(); next <= now; next += interval) {
      const pending = call(next);
      calls.add(pending);
      void pending.finally(() => calls.delete(pending));
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(1, next - performance.now())));
  }
  await Promise.all(calls);
  await watcher;
  return { latencies, seconds: (performance.now() - started) / 1000, mainCpuMs: mainThreadCpuMs(pid) - cpuBefore };
}

interface RoundResult {
  /** Quiet phases: the first after the warm-up, then one after each upload (the same gateway, warm, no upload). */
  quiet: Phase[];
  /** One per upload: chat from the upload's answer until the file is indexed and every passage has its vector. */
  uploads: Phase[];
  /** How long each upload call took to answer (chat ran meanwhile, untimed). */
  uploadCallSeconds: number[];
  passages: number;
}

/**
 * One fresh gateway of `checkout` (this one when undefined): warm-up, then CYCLES times a quiet phase and an upload
 * phase, then a last quiet phase, so that each upload has a quiet phase of the same warm gateway on either side.
 */
async function round(upstreamPort: number, index: number, checkout?: string): Promise<RoundResult> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'omnigate-bench-embed-'));
  const gateway = await startGateway(
    upstreamPort,
    // Over the 10,000,000 characters older builds indexed at most (they refused the file); 16,000,000 since.
    { LOG_LEVEL: 'warn', OMNIGATE_DATA_DIR: dataDir, OMNIGATE_INDEX_MAX_CHARACTERS: '11000000' },
    undefined,
    'search:\n  embedding_model: local:embed\n',
    checkout,
  );
  const base = `http://127.0.0.1:${gateway.port}`;
  try {
    const db = new Database(path.join(dataDir, 'omnigate.sqlite'), { readonly: true, fileMustExist: true });
    // Whether every passage has its vector. A scan of the passages blocks the callers' loop ~20 ms on a 10 MB file's
    // (an earlier version of this bench ran one every 50 ms and so slowed its own callers): each poll only looks up
    // the last passage's vector (embedding goes in id order), and the scan runs once that one is there.
    const lastPassageEmbedded = db
      .prepare(
        'SELECT EXISTS (SELECT 1 FROM search_passage_vectors WHERE passage_id = (SELECT max(id) FROM search_passages))',
      )
      .pluck();
    const passagePending = db
      .prepare(
        `SELECT EXISTS (SELECT 1 FROM search_passages p LEFT JOIN search_passage_vectors v ON v.passage_id = p.id
         WHERE v.passage_id IS NULL)`,
      )
      .pluck();
    const fileIndexing = async (id: string) =>
      (
        (await (await fetch(`${base}/v1/files/${id}`, { headers: { authorization: `Bearer ${KEY}` } })).json()) as {
          indexing?: { status?: string; reason?: string | null };
        }
      ).indexing;
    const send = async (name: string, content: Uint8Array<ArrayBuffer>) => {
      const form = new FormData();
      form.append('purpose', 'user_data');
      form.append('file', new Blob([content], { type: 'text/plain' }), name);
      const response = await fetch(`${base}/v1/files`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}` },
        body: form,
      });
      const answer = (await response.json()) as { id?: string };
      if (!answer.id) {
        throw new Error(`upload refused: ${response.status} ${JSON.stringify(answer).slice(0, 300)}`);
      }
      return answer.id;
    };
    // The routes the upload phase calls compile their request validators on first use (express-openapi-validator,
    // 50–90 ms of the event loop each in a CPU profile): a small upload and a read of it in the warm-up, so that
    // the upload phase measures the indexing of the 10 MB file, not a route's first call.
    const warmUpFile = await send('warm-up.txt', new TextEncoder().encode('A warm-up note about the harbour.'));
    await fileIndexing(warmUpFile);
    // Every phase polls the same way at each 50 ms tick (a read of a file's indexing state, and the look-up of the
    // last passage's vector), so the polling's own cost on the gateway and on the callers is in the quiet phases too.
    const done = async (fileId: string, timeIsUp = true) => {
      const indexing = await fileIndexing(fileId);
      const lastEmbedded = lastPassageEmbedded.get() === 1;
      return timeIsUp && indexing?.status !== 'indexing' && lastEmbedded && passagePending.get() === 0;
    };
    const warmEnd = Date.now() + WARM_UP_MS;
    await chatLoad(base, gateway.pid, () => Date.now() > warmEnd);
    const quietPhase = () => {
      const quietEnd = Date.now() + QUIET_MS;
      return chatLoad(base, gateway.pid, () => done(warmUpFile, Date.now() > quietEnd));
    };
    const quiet = [await quietPhase()];
    const uploads: Phase[] = [];
    const uploadCallSeconds: number[] = [];
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      const uploading = send(`log-${index}-${cycle}.txt`, new Uint8Array(upload(index * CYCLES + cycle)));
      let fileId: string | undefined;
      void uploading.then((id) => {
        fileId = id;
      });
      // The upload call itself is foreground work (10 MiB received and stored before it answers): chat goes on
      // meanwhile, untimed. The background work is timed: from the answer until the file is indexed and every
      // passage has its vector.
      const uploadStarted = performance.now();
      await chatLoad(base, gateway.pid, () => fileId !== undefined);
      uploadCallSeconds.push((performance.now() - uploadStarted) / 1000);
      uploads.push(await chatLoad(base, gateway.pid, async () => fileId !== undefined && (await done(fileId))));
      const indexed = await fileIndexing(await uploading);
      if (indexed?.status !== 'indexed') {
        throw new Error(`the 10 MB upload was not indexed: ${JSON.stringify(indexed)}`);
      }
      quiet.push(await quietPhase());
    }
    const passages = (db.prepare('SELECT count(*) AS n FROM search_passages').get() as { n: number }).n;
    db.close();
    return { quiet, uploads, uploadCallSeconds, passages };
  } finally {
    await gateway.stop();
    // Each round's database holds two 10 MiB files, their passages and vectors (~80 MB).
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export interface PhaseSummary {
  /** The gateway main thread's CPU per chat call (ms). */
  mainCpuPerCall: number;
  calls: number;
  callsPerSecond: number;
  p50: number;
  p99: number;
  longest: number;
}

function summary(phases: Phase[]): PhaseSummary {
  const sorted = phases.flatMap((phase) => phase.latencies).sort((a, b) => a - b);
  const seconds = phases.reduce((sum, phase) => sum + phase.seconds, 0);
  return {
    mainCpuPerCall: phases.reduce((sum, phase) => sum + phase.mainCpuMs, 0) / sorted.length,
    calls: sorted.length,
    callsPerSecond: sorted.length / seconds,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    longest: sorted[sorted.length - 1] ?? Number.NaN,
  };
}

/** How one upload phase differs from the mean of the quiet phases on either side of it, in per cent. */
export interface CycleChange {
  callsPerSecond: number;
  p50: number;
  p99: number;
  mainCpuPerCall: number;
  /** The two quiet phases' own difference in p50 and p99 (the later against the earlier): the yardstick of noise. */
  quietP50: number;
  quietP99: number;
}

export interface BackgroundEmbeddingResult {
  variant: string;
  quiet: PhaseSummary;
  upload: PhaseSummary;
  /** One per upload, over all rounds. */
  changes: CycleChange[];
  /** The upload's answer to the last vector, per upload (s). */
  uploadSeconds: number[];
  passagesPerRound: number[];
}

const change = (value: number, control: number) => ((value - control) / control) * 100;

function cycleChanges(result: RoundResult): CycleChange[] {
  return result.uploads.map((phase, cycle) => {
    const before = summary([result.quiet[cycle]!]);
    const after = summary([result.quiet[cycle + 1]!]);
    const during = summary([phase]);
    const control = (key: keyof PhaseSummary) => (before[key] + after[key]) / 2;
    return {
      callsPerSecond: change(during.callsPerSecond, control('callsPerSecond')),
      p50: change(during.p50, control('p50')),
      p99: change(during.p99, control('p99')),
      mainCpuPerCall: change(during.mainCpuPerCall, control('mainCpuPerCall')),
      quietP50: change(after.p50, before.p50),
      quietP99: change(after.p99, before.p99),
    };
  });
}

export async function benchBackgroundEmbedding(
  options: { rounds?: number; baseline?: string } = {},
): Promise<BackgroundEmbeddingResult[]> {
  const rounds = options.rounds ?? 3;
  spawnSync(process.execPath, ['scripts/ensure-build.mjs'], { stdio: 'inherit' });
  if (options.baseline) {
    spawnSync(process.execPath, ['scripts/ensure-build.mjs'], { stdio: 'inherit', cwd: options.baseline });
  }
  if (PIN) {
    // The callers (this process, every thread) run on the load core beside the fake upstream, never on the
    // gateway's core.
    spawnSync('taskset', ['-a', '-pc', LOAD_CORE, String(process.pid)], { stdio: 'ignore' });
  }
  const variants: Array<{ name: string; checkout?: string }> = [
    ...(options.baseline ? [{ name: `baseline (${options.baseline})`, checkout: options.baseline }] : []),
    { name: 'this checkout' },
  ];
  const upstreamPort = await freePort();
  const upstream = await startChild('bench/fake-upstream-server.ts', upstreamPort, {}, LOAD_CORE);
  const results = new Map(variants.map((variant) => [variant.name, [] as RoundResult[]]));
  try {
    for (let index = 0; index < rounds; index++) {
      // The order alternates, so neither variant always runs first after the other's shutdown.
      const order = index % 2 === 0 ? variants : [...variants].reverse();
      for (const variant of order) {
        const result = await round(upstreamPort, index, variant.checkout);
        results.get(variant.name)!.push(result);
        for (const [cycle, moved] of cycleChanges(result).entries()) {
          console.log(
            `  round ${index + 1} ${variant.name}, upload ${cycle + 1} (call ${result.uploadCallSeconds[cycle]!.toFixed(2)} s, then ${result.uploads[cycle]!.seconds.toFixed(1)} s) against the quiet phases beside it: calls/s ${signed(moved.callsPerSecond)}, p50 ${signed(moved.p50)}, p99 ${signed(moved.p99)}, main-thread CPU a call ${signed(moved.mainCpuPerCall)}; quiet against quiet p50 ${signed(moved.quietP50)}, p99 ${signed(moved.quietP99)}; load ${loadAverage()}`,
          );
        }
      }
    }
  } finally {
    await upstream.stop();
  }
  return variants.map((variant) => {
    const done = results.get(variant.name)!;
    return {
      variant: variant.name,
      quiet: summary(done.flatMap((result) => result.quiet)),
      upload: summary(done.flatMap((result) => result.uploads)),
      changes: done.flatMap(cycleChanges),
      uploadSeconds: done.flatMap((result) => result.uploads.map((phase) => phase.seconds)),
      passagesPerRound: done.map((result) => result.passages),
    };
  });
}

const signed = (percent: number) => `${percent >= 0 ? '+' : ''}${percent.toFixed(1)} %`;
const medianOf = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** The results as the table bench/README.md shows. */
export function printBackgroundEmbedding(results: BackgroundEmbeddingResult[]): void {
  console.log(
    `chat beside the background indexing and embedding of a 10 MiB upload (local:embed), ${CHAT_RATE} calls a second (open loop), every thread of the gateway on core ${SERVER_CORE}:`,
  );
  console.table(
    results.flatMap((result) =>
      (['quiet', 'upload'] as const).map((phase) => ({
        variant: result.variant,
        phase: phase === 'quiet' ? 'quiet (no upload)' : 'during the uploads’ indexing',
        calls: result[phase].calls,
        'calls/s': Math.round(result[phase].callsPerSecond),
        'p50 ms': Number(result[phase].p50.toFixed(2)),
        'p99 ms': Number(result[phase].p99.toFixed(1)),
        'longest ms': Math.round(result[phase].longest),
        'main CPU µs/call': Math.round(result[phase].mainCpuPerCall * 1000),
      })),
    ),
  );
  for (const result of results) {
    const median = (key: keyof CycleChange) => signed(medianOf(result.changes.map((moved) => moved[key])));
    const spread = (key: 'quietP50' | 'quietP99') =>
      Math.max(...result.changes.map((moved) => Math.abs(moved[key]))).toFixed(1);
    console.log(
      `  ${result.variant}: each upload against the quiet phases beside it, median of ${result.changes.length}: calls/s ${median('callsPerSecond')}, p50 ${median('p50')}, p99 ${median('p99')}, main-thread CPU a call ${median('mainCpuPerCall')} (quiet against quiet: p50 up to ±${spread('quietP50')} %, p99 up to ±${spread('quietP99')} %); upload's answer to last vector ${result.uploadSeconds.map((s) => s.toFixed(1)).join(' / ')} s; passages per round ${result.passagesPerRound.join(' / ')}`,
    );
  }
}
