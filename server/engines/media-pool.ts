/** The one pool the built-in media engines share (images, image analysis, speech, music, video; text extraction runs its own instance), sized from configuration. */
import { availableParallelism } from 'node:os';
import type { MediaJobs } from './media-jobs.js';
import { runnableModule } from './pool/runnable-module.js';
import { createWorkerPool, type PoolSlot, type WorkerPool } from './pool/worker-pool.js';

export type MediaPool = WorkerPool<MediaJobs>;
/** What one generation holds: its worker (`run`) and the signal that stops it. */
export type MediaSlot = PoolSlot<MediaJobs>;

export interface MediaPoolSettings {
  /** Generations at once (worker threads). */
  workers: number;
  /** Generations that may wait for a worker, all keys together; the next is a 429. */
  queueLimit: number;
  /** Generations one API key may have queued or running; the next is a 429. Unset: no cap per key. */
  perKeyLimit?: number;
  /** Longest one generation may take before it is stopped with 504. */
  jobTimeoutMs: number;
  /** Old-generation heap of each worker, in MiB; a job that needs more is refused with 413 and its worker replaced. */
  heapMb?: number;
  /** Scheduling niceness of the workers (worker-pool.ts): the background pools' give way to the event loop. */
  niceness?: number;
}

/**
 * Two workers at most (the engines are single-threaded, and chat must keep a core), 16 waiting, 8 per key (an
 * honest client rarely has more than a few generations in flight), 2 minutes each.
 */
export const DEFAULT_MEDIA_SETTINGS = {
  workers: Math.max(1, Math.min(2, availableParallelism() - 1)),
  queueLimit: 16,
  perKeyLimit: 8,
  jobTimeoutMs: 120_000,
} satisfies MediaPoolSettings;

/** A media worker's heap: what the engines have always been given; a job past it is refused instead of growing the process. */
const MEDIA_HEAP_MB = 1024;

export function createMediaPool(settings: MediaPoolSettings): MediaPool {
  return createWorkerPool<MediaJobs>({
    name: 'media',
    entry: runnableModule('./media-worker', import.meta.url),
    size: settings.workers,
    queueLimit: settings.queueLimit,
    perOwnerLimit: settings.perKeyLimit,
    jobTimeoutMs: settings.jobTimeoutMs,
    resourceLimits: { maxOldGenerationSizeMb: settings.heapMb ?? MEDIA_HEAP_MB },
    niceness: settings.niceness,
  });
}
