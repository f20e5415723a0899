/**
 * The threads that parse large JSON bodies, so that decoding and parsing megabytes never hold the event loop:
 * UTF-8 decoding and JSON.parse of a 24 MiB body cost 40–60 ms of one block on the main thread, while taking
 * the parsed value back from a thread (structured clone) costs about a quarter of that for a body of a few long
 * strings (bench/README.md, body parsing). A small pool of engines/pool: `JSON_PARSE_THREADS` threads, started on
 * the first large body and ended after `JSON_PARSE_IDLE_MS` without one. Bodies wait in one queue per API key,
 * served round-robin, and one key may have `JSON_PARSE_PER_KEY` bodies queued or parsing: past that, or past
 * `JSON_PARSE_QUEUE` waiting in all, the body is refused with the pool's 429 and a Retry-After — never parsed on
 * the main thread instead, which is the block this pool exists to avoid.
 */
import { availableParallelism } from 'node:os';
import { runnableModule } from '../engines/pool/runnable-module.js';
import { createWorkerPool, type WorkerPool } from '../engines/pool/worker-pool.js';
import type { JsonParseJobs, ParseJsonOutput } from './json-parse-job.js';

const JSON_PARSE_ENTRY = runnableModule('./json-parse-worker', import.meta.url);

/** One thread per core, at most two: a parse is short, and more threads than cores only share them. */
export const JSON_PARSE_THREADS = Math.max(1, Math.min(2, availableParallelism()));
/** Bodies that may wait for a thread, all keys together (each holds up to the body limit in memory). */
export const JSON_PARSE_QUEUE = 16;
/** Bodies one key may have queued or parsing. */
export const JSON_PARSE_PER_KEY = 4;
/** A parse of the largest body takes ~50 ms; one still running after this long is stopped (504). */
export const JSON_PARSE_TIMEOUT_MS = 30_000;
/** Starting a thread (under tsx, from the sources) can take seconds on a loaded machine. */
const JSON_PARSE_STARTUP_MS = 60_000;
export const JSON_PARSE_IDLE_MS = 60_000;
/**
 * Room for the decoded text and the parsed value of a body (about twice its size) well past the default 25 MiB
 * limit; a body too large for it is refused with the pool's 413 `engine_out_of_memory`.
 */
const JSON_PARSE_HEAP_MB = 512;

let pool: WorkerPool<JsonParseJobs> | undefined;

/**
 * Parses the body's bytes in a thread. The bytes' ArrayBuffer is handed over (not copied) when the body owns all
 * of it, which a body collected into one buffer of over 4 KiB does; it must not be used afterwards.
 */
export function parseInThread(body: Buffer, owner: string, signal: AbortSignal): Promise<ParseJsonOutput> {
  pool ??= createWorkerPool<JsonParseJobs>({
    name: 'JSON body parser',
    entry: JSON_PARSE_ENTRY,
    size: JSON_PARSE_THREADS,
    queueLimit: JSON_PARSE_QUEUE,
    perOwnerLimit: JSON_PARSE_PER_KEY,
    jobTimeoutMs: JSON_PARSE_TIMEOUT_MS,
    startupMs: JSON_PARSE_STARTUP_MS,
    idleMs: JSON_PARSE_IDLE_MS,
    resourceLimits: { maxOldGenerationSizeMb: JSON_PARSE_HEAP_MB },
  });
  const owned = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength;
  const input = { bytes: body.buffer as ArrayBuffer, byteOffset: body.byteOffset, byteLength: body.byteLength };
  return pool.use(signal, (slot) => slot.run('parseJson', input, { transfer: owned ? [input.bytes] : [] }), {
    owner,
  });
}

/** Threads running now, for tests. */
export function jsonParseThreads(): number {
  return pool?.stats().workers ?? 0;
}
