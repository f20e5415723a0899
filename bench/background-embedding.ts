/**
 * Issue 34's second budget: the background embedding of a 10 MB upload (semantic search with
 * `search.embedding_model: local:embed`) must not delay chat calls. A real gateway (`dist/main.js`, pinned like
 * the other gateway rows) routes chat to the fake upstream; CHAT_CONCURRENCY loops call it back to back and time
 * each call. A round is a fresh gateway: a quiet phase (5 s, no upload), then an upload phase (a fresh 10 MiB text
 * file uploaded, chat timed from the upload until the file is indexed and every passage has its vector, read from
 * the gateway's SQLite file), then a second quiet phase (5 s, once the file is indexed). Reported per phase: calls,
 * calls/s, p50, p99 and the longest call (a stall of the gateway's event loop shows there).
 *
 * The warm-up (2 s of chat, and one small upload read back, so that the files routes have compiled their
 * validators) is not measured.
 *
 * A/B: with `BENCH_EMBED_BASELINE=<checkout>` (another worktree with its own `dist/`, e.g. the commit before a
 * change) every round runs the baseline and this checkout one after the other, the order alternating by round,
 * so the machine's drift hits both alike. `BENCH_EMBED_ROUNDS` rounds (default 3).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { freePort, KEY, LOAD_CORE, startChild, startGateway } from './children.js';
import { percentile } from './percentile.js';

const CHAT_CONCURRENCY = 4;
const UPLOAD_BYTES = 10 * 1024 * 1024;
const QUIET_MS = 5_000;
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
  await Promise.all(
    Array.from({ length: CHAT_CONCURRENCY }, async () => {
      while (!stop) {
        const callStarted = performance.now();
        const response = await fetch(`${base}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
          body,
        });
        await response.arrayBuffer();
        if (response.ok) {
          latencies.push(performance.now() - callStarted);
        }
      }
    }),
  );
  await watcher;
  return { latencies, seconds: (performance.now() - started) / 1000, mainCpuMs: mainThreadCpuMs(pid) - cpuBefore };
}

interface RoundResult {
  quiet: Phase;
  upload: Phase;
  /** The same quiet load again once the file is indexed: the same gateway, warm, with no upload. */
  after: Phase;
  passages: number;
}

/** One fresh gateway of `checkout` (this one when undefined): warm-up, a quiet phase, then one upload phase. */
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
    const pendingPassages = () =>
      (
        db
          .prepare(
            `SELECT count(*) AS n FROM search_passages p LEFT JOIN search_passage_vectors v ON v.passage_id = p.id
             WHERE v.passage_id IS NULL`,
          )
          .get() as { n: number }
      ).n;
    const fileIndexing = async (id: string) =>
      (
        (await (await fetch(`${base}/v1/files/${id}`, { headers: { authorization: `Bearer ${KEY}` } })).json()) as {
          indexing?: { status?: string; reason?: string | null };
        }
      ).indexing;
    // The routes the upload phase calls compile their request validators on first use (express-openapi-validator,
    // 50–90 ms of the event loop each in a CPU profile): a small upload and a read of it in the warm-up, so that
    // the upload phase measures the indexing of the 10 MB file, not a route's first call.
    const warmForm = new FormData();
    warmForm.append('purpose', 'user_data');
    warmForm.append('file', new Blob(['A warm-up note about the harbour.'], { type: 'text/plain' }), 'warm-up.txt');
    const warmFile = (await (
      await fetch(`${base}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${KEY}` }, body: warmForm })
    ).json()) as { id: string };
    await fileIndexing(warmFile.id);
    const warmEnd = Date.now() + 2_000;
    await chatLoad(base, gateway.pid, () => Date.now() > warmEnd);
    const quietEnd = Date.now() + QUIET_MS;
    const quiet = await chatLoad(base, gateway.pid, () => Date.now() > quietEnd);
    const form = new FormData();
    form.append('purpose', 'user_data');
    form.append('file', new Blob([new Uint8Array(upload(index))], { type: 'text/plain' }), `log-${index}.txt`);
    const uploading = fetch(`${base}/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}` },
      body: form,
    }).then(async (response) => {
      const answer = (await response.json()) as { id?: string };
      if (!answer.id) {
        throw new Error(`upload refused: ${response.status} ${JSON.stringify(answer).slice(0, 300)}`);
      }
      return answer.id;
    });
    let fileId: string | undefined;
    void uploading.then((id) => {
      fileId = id;
    });
    // Chat is timed from the upload until the file is indexed and every passage has its vector.
    const during = await chatLoad(
      base,
      gateway.pid,
      async () =>
        fileId !== undefined && (await fileIndexing(fileId))?.status !== 'indexing' && pendingPassages() === 0,
    );
    const indexed = await fileIndexing(await uploading);
    if (indexed?.status !== 'indexed') {
      throw new Error(`the 10 MB upload was not indexed: ${JSON.stringify(indexed)}`);
    }
    const passages = (db.prepare('SELECT count(*) AS n FROM search_passages').get() as { n: number }).n;
    db.close();
    // The first quiet phase comes right after the gateway's start, when it may still be warming up (it read slower
    // than the upload phase in some runs); this one, after the upload, is the fairer control.
    const afterEnd = Date.now() + QUIET_MS;
    const after = await chatLoad(base, gateway.pid, () => Date.now() > afterEnd);
    return { quiet, upload: during, after, passages };
  } finally {
    await gateway.stop();
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

export interface BackgroundEmbeddingResult {
  variant: string;
  quiet: PhaseSummary;
  upload: PhaseSummary;
  after: PhaseSummary;
  /** Upload to last vector, per round (s). */
  uploadSeconds: number[];

  passagesPerUpload: number[];
}

export async function benchBackgroundEmbedding(
  options: { rounds?: number; baseline?: string } = {},
): Promise<BackgroundEmbeddingResult[]> {
  const rounds = options.rounds ?? 3;
  spawnSync(process.execPath, ['scripts/ensure-build.mjs'], { stdio: 'inherit' });
  if (options.baseline) {
    spawnSync(process.execPath, ['scripts/ensure-build.mjs'], { stdio: 'inherit', cwd: options.baseline });
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
        const brief = summary([result.upload]);
        console.log(
          `  round ${index + 1} ${variant.name}: upload phase ${result.upload.seconds.toFixed(1)} s, ${result.passages} passages, p50 ${brief.p50.toFixed(2)} ms, p99 ${brief.p99.toFixed(2)} ms, longest ${brief.longest.toFixed(0)} ms, main-thread CPU ${Math.round(brief.mainCpuPerCall * 1000)} µs a call; load ${loadAverage()}`,
        );
      }
    }
  } finally {
    await upstream.stop();
  }
  return variants.map((variant) => {
    const done = results.get(variant.name)!;
    return {
      variant: variant.name,
      quiet: summary(done.map((result) => result.quiet)),
      upload: summary(done.map((result) => result.upload)),
      after: summary(done.map((result) => result.after)),
      uploadSeconds: done.map((result) => result.upload.seconds),

      passagesPerUpload: done.map((result) => result.passages),
    };
  });
}

const PHASE_NAMES = {
  quiet: 'quiet (no upload)',
  upload: 'during the upload’s indexing',
  after: 'quiet after the upload',
} as const;

/** The results as the table bench/README.md shows. */
export function printBackgroundEmbedding(results: BackgroundEmbeddingResult[]): void {
  console.log(
    `chat beside the background indexing and embedding of a 10 MiB upload (local:embed), ${CHAT_CONCURRENCY} concurrent callers:`,
  );
  console.table(
    results.flatMap((result) =>
      (['quiet', 'upload', 'after'] as const).map((phase) => ({
        variant: result.variant,
        phase: PHASE_NAMES[phase],
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
    console.log(
      `  ${result.variant}: upload to last vector ${result.uploadSeconds.map((s) => s.toFixed(1)).join(' / ')} s, passages ${result.passagesPerUpload.join(' / ')}`,
    );
  }
}
