/**
 * The main thread's way to the o200k encoder, which runs in a worker thread of its own (encoder-jobs.ts), so
 * the main thread never loads gpt-tokenizer: loading it there cost about 66 MiB of RSS from start-up, even in a
 * gateway that never counts a token, and blocked the event loop about 170 ms.
 *
 * The thread is a one-slot pool of engines/pool, started on the first count and ended after ENCODER_IDLE_MS
 * without one, so an idle gateway holds no encoder. Media semantics do not fit a count, which is part of a chat
 * call and must never fail it: when the thread cannot answer (it died, a job outlived ENCODER_JOB_TIMEOUT_MS,
 * ENCODER_QUEUE_LIMIT counts already wait, or the encoder is closing), the caller's rough fallback is used
 * instead (about ROUGH_CHARS_PER_TOKEN chars per token) and a warning is logged. A dead or stopped thread is
 * replaced at the next job.
 */
import { runnableModule } from '../engines/pool/runnable-module.js';
import { createWorkerPool, type WorkerPool } from '../engines/pool/worker-pool.js';
import type { CountJobInput, CountJobOutput, EncoderJobs } from './encoder-jobs.js';

/** The one place that names the encoder thread's entry module. */
const ENCODER_ENTRY = runnableModule('./encoder-worker', import.meta.url);

/** An encoder thread this long without a job exits, freeing its memory; the next count starts another. */
export const ENCODER_IDLE_MS = 30_000;

/**
 * A job still unanswered after this long (a count within the budget takes about a second at worst) gets the
 * fallback, and its thread is ended: something is wrong with it, and a chat call must go on.
 */
export const ENCODER_JOB_TIMEOUT_MS = 10_000;

/**
 * What a job that starts the thread may add for the start-up (loading the o200k ranks takes about a second
 * alone, and over ten on a machine at load 14): counted in the job's time, it made the first count fall back and
 * the thread be ended while it was still loading.
 */
export const ENCODER_STARTUP_MS = 60_000;

/**
 * Counts that may wait for the one thread. Each holds at most a budget's worth of text, and waits for a chat
 * call in flight; beyond the limit (a flood the thread cannot keep up with) a count gets the fallback at once
 * rather than the pool's 429, which a chat call must never see.
 */
export const ENCODER_QUEUE_LIMIT = 10_000;

/**
 * Counts that wait are sent together, in one job of up to this many chars: a job costs a message each way and a
 * wake-up of the thread (about 50 µs, more on a busy core), and a call's input and output counts are asked for
 * together. The cap keeps a batch's CPU, and so its wait behind the timeout, that of one call's budget.
 */
export const ENCODER_BATCH_CHARS = 512 * 1024;

/** The fallback's rate: OpenAI's rule of thumb for English. Code, CJK and base64 have more tokens per char. */
export const ROUGH_CHARS_PER_TOKEN = 4;

/** Fallbacks are logged at most this often (a dead encoder under load would log one per call). */
const WARNING_INTERVAL_MS = 60_000;

/** A count has no caller signal of its own: the calls that count finish their count and check theirs after. */
const NO_CALLER_SIGNAL = new AbortController().signal;

/** Where encoder failures are told; pino's logger fits. */
export interface EncoderWarnings {
  warn(details: object, message: string): void;
}

export interface EncoderOptions {
  entry?: URL;
  idleMs?: number;
  jobTimeoutMs?: number;
  startupMs?: number;
  queueLimit?: number;
  /** Defaults to the sink set by `sendEncoderWarningsTo` (process warnings until then). */
  warnings?: EncoderWarnings;
}

type JobKind = keyof EncoderJobs & string;
type JobInput<K extends JobKind> = Parameters<EncoderJobs[K]>[0];
type JobOutput<K extends JobKind> = Awaited<ReturnType<EncoderJobs[K]>>;

export interface Encoder {
  /** Runs one job on the encoder thread; if the thread cannot answer, logs a warning and returns `fallback()`. */
  run<K extends JobKind>(kind: K, input: JobInput<K>, fallback: () => JobOutput<K>): Promise<JobOutput<K>>;
  /**
   * One count, sent with the others asked for in the same turn of the event loop or while a job runs (one
   * `countBatch` job); like `run`, it returns `fallback()` when the thread cannot answer.
   */
  count(input: CountJobInput, fallback: () => CountJobOutput): Promise<CountJobOutput>;
  /** Encoder threads running now: 0 or 1. */
  threads(): number;
  /** Ends the thread (a running job gets its fallback). The encoder stays usable: a later job starts a new one. */
  close(): Promise<void>;
}

const processWarnings: EncoderWarnings = {
  warn: (details, message) => process.emitWarning(`${message} ${JSON.stringify(details)}`, 'TokenizerWarning'),
};
let defaultWarnings = processWarnings;

/** Sends the warnings of encoders without their own sink (the shared one) to the server's logger. */
export function sendEncoderWarningsTo(warnings: EncoderWarnings): void {
  defaultWarnings = warnings;
}

export function createEncoder(options: EncoderOptions = {}): Encoder {
  let pool: WorkerPool<EncoderJobs> | undefined;
  let lastWarningAt = -Infinity;
  let unreported = 0;

  function warn(kind: string, error: unknown): void {
    unreported += 1;
    const now = performance.now();
    if (now - lastWarningAt < WARNING_INTERVAL_MS) {
      return;
    }
    lastWarningAt = now;
    const reason = error instanceof Error ? error.message : String(error);
    (options.warnings ?? defaultWarnings).warn(
      { job: kind, reason, fallbacks: unreported },
      `the tokenizer thread could not answer; token counts are rough estimates (${ROUGH_CHARS_PER_TOKEN} chars per token) until it can`,
    );
    unreported = 0;
  }

  async function run<K extends JobKind>(
    kind: K,
    input: JobInput<K>,
    fallback: () => JobOutput<K>,
  ): Promise<JobOutput<K>> {
    pool ??= createWorkerPool<EncoderJobs>({
      name: 'tokenizer',
      entry: options.entry ?? ENCODER_ENTRY,
      size: 1,
      queueLimit: options.queueLimit ?? ENCODER_QUEUE_LIMIT,
      jobTimeoutMs: options.jobTimeoutMs ?? ENCODER_JOB_TIMEOUT_MS,
      startupMs: options.startupMs ?? ENCODER_STARTUP_MS,
      idleMs: options.idleMs ?? ENCODER_IDLE_MS,
      // Loading the ranks makes V8 grow a thread's young generation to its 32 MiB default; counts need little. With
      // the ranks read from JSON (o200k-encoder.ts), a loaded thread holds ~45 MiB instead of ~76 (bench/README.md).
      resourceLimits: { maxOldGenerationSizeMb: 512, maxYoungGenerationSizeMb: 4 },
    });
    try {
      return await pool.use(NO_CALLER_SIGNAL, (slot): Promise<JobOutput<K>> => slot.run(kind, input));
    } catch (error) {
      warn(kind, error);
      return fallback();
    }
  }

  interface WaitingCount {
    input: CountJobInput;
    fallback: () => CountJobOutput;
    resolve: (output: CountJobOutput) => void;
  }
  const waiting: WaitingCount[] = [];
  let sending = false;

  function charsOf(input: CountJobInput): number {
    return input.texts.reduce((sum, text) => sum + text.length, 0);
  }

  /** The next batch: the first count waiting, and those after it while the chars stay within the cap. */
  function nextBatch(): WaitingCount[] {
    // Called only while a count waits; size < waiting.length below.
    let chars = charsOf(waiting[0]!.input);
    let size = 1;
    while (size < waiting.length && chars + charsOf(waiting[size]!.input) <= ENCODER_BATCH_CHARS) {
      chars += charsOf(waiting[size]!.input);
      size += 1;
    }
    return waiting.splice(0, size);
  }

  async function sendWaiting(): Promise<void> {
    while (waiting.length > 0) {
      const batch = nextBatch();
      const outputs = await run('countBatch', { counts: batch.map((count) => count.input) }, () =>
        batch.map((count) => count.fallback()),
      );
      batch.forEach((count, index) => count.resolve(outputs[index] ?? count.fallback()));
    }
    sending = false;
  }

  function count(input: CountJobInput, fallback: () => CountJobOutput): Promise<CountJobOutput> {
    if (waiting.length >= (options.queueLimit ?? ENCODER_QUEUE_LIMIT)) {
      warn('countBatch', new Error(`${waiting.length} counts are waiting for the tokenizer thread`));
      return Promise.resolve(fallback());
    }
    return new Promise((resolve) => {
      waiting.push({ input, fallback, resolve });
      if (!sending) {
        sending = true;
        // After this turn's other counts (a call's input and output are asked for together) have joined.
        queueMicrotask(() => void sendWaiting());
      }
    });
  }

  return {
    run,
    count,
    threads() {
      return pool?.stats().workers ?? 0;
    },
    async close() {
      const closing = pool;
      pool = undefined;
      await closing?.close();
    },
  };
}

let shared: Encoder | undefined;

/** The encoder the whole process counts with. Creating it starts no thread. */
export function sharedEncoder(): Encoder {
  shared ??= createEncoder();
  return shared;
}

/** Ends the shared encoder's thread, for shutdown and for tests. */
export async function closeSharedEncoder(): Promise<void> {
  await shared?.close();
}
