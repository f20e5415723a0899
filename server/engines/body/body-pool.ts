/**
 * The threads that take a request's large inputs off the event loop: JSON bodies of megabytes (UTF-8 decoding and
 * JSON.parse of a 24 MiB body cost 40–60 ms of one block on the main thread, taking the parsed value back from a
 * thread about a quarter of that) and base64 strings of megabytes (an image data URL, `audio_base64`). A small
 * pool of engines/pool: `BODY_THREADS` threads, started on the first large input and ended after
 * `BODY_IDLE_MS` without one. Jobs wait in one queue per owner (the API key), served round-robin, and one owner
 * may have `BODY_JOBS_PER_KEY` jobs queued or running: past that, or past `BODY_QUEUE` waiting in all, the request
 * is refused with the pool's 429 and a Retry-After — never done on the main thread instead, which is the block
 * this pool exists to avoid. See bench/README.md, body decoding.
 */
import { availableParallelism } from 'node:os';
import { runnableModule } from '../pool/runnable-module.js';
import { createWorkerPool, type WorkerPool } from '../pool/worker-pool.js';
import type { BodyJobs, BytesInput } from './body-jobs.js';

const BODY_ENTRY = runnableModule('./body-worker', import.meta.url);

/** One thread per core, at most two: a job is short, and more threads than cores only share them. */
export const BODY_THREADS = Math.max(1, Math.min(2, availableParallelism()));
/** Jobs that may wait for a thread, all owners together (each holds up to the body limit in memory). */
export const BODY_QUEUE = 16;
/** Jobs one owner may have queued or running. */
export const BODY_JOBS_PER_KEY = 4;
/** A job on the largest body takes ~50 ms; one still running after this long is stopped (504). */
const BODY_JOB_TIMEOUT_MS = 30_000;
/** Starting a thread (under tsx, from the sources) can take seconds on a loaded machine. */
const BODY_STARTUP_MS = 60_000;
const BODY_IDLE_MS = 60_000;
/**
 * Room for the decoded text and the parsed value of a body (about twice its size) well past the default 25 MiB
 * limit; a body too large for it is refused with the pool's 413 `engine_out_of_memory`.
 */
const BODY_HEAP_MB = 512;

/** A caller that gives none: the job runs to its end. */
const NO_SIGNAL = new AbortController().signal;

let pool: WorkerPool<BodyJobs> | undefined;

/**
 * Runs one job on a body thread. The bytes' ArrayBuffer is handed over (not copied) when they own all of it,
 * which bytes collected into one buffer of over 4 KiB do: the caller must not use them afterwards.
 */
export function runInBodyThread<K extends keyof BodyJobs>(
  kind: K,
  bytes: Uint8Array,
  options: { owner?: string; signal?: AbortSignal } = {},
): Promise<Awaited<ReturnType<BodyJobs[K]>>> {
  pool ??= createWorkerPool<BodyJobs>({
    name: 'body decoding',
    entry: BODY_ENTRY,
    size: BODY_THREADS,
    queueLimit: BODY_QUEUE,
    perOwnerLimit: BODY_JOBS_PER_KEY,
    jobTimeoutMs: BODY_JOB_TIMEOUT_MS,
    startupMs: BODY_STARTUP_MS,
    idleMs: BODY_IDLE_MS,
    resourceLimits: { maxOldGenerationSizeMb: BODY_HEAP_MB },
  });
  const buffer = bytes.buffer as ArrayBuffer;
  const owned = bytes.byteOffset === 0 && bytes.byteLength === buffer.byteLength;
  const input: BytesInput = { bytes: buffer, byteOffset: bytes.byteOffset, byteLength: bytes.byteLength };
  return pool.use(
    options.signal ?? NO_SIGNAL,
    (slot) => slot.run(kind, input as never, { transfer: owned ? [buffer] : [] }),
    { owner: options.owner },
  );
}

/** Body threads running now, for tests. */
export function bodyThreads(): number {
  return pool?.stats().workers ?? 0;
}
