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
  /** Generations that may wait for a worker; the next is a 429. */
  queueLimit: number;
  /** Longest one generation may take before it is stopped with 504. */
  jobTimeoutMs: number;
}

/** Two workers at most (the engines are single-threaded, and chat must keep a core), 16 waiting, 2 minutes each. */
export const DEFAULT_MEDIA_SETTINGS: MediaPoolSettings = {
  workers: Math.max(1, Math.min(2, availableParallelism() - 1)),
  queueLimit: 16,
  jobTimeoutMs: 120_000,
};

export function createMediaPool(settings: MediaPoolSettings): MediaPool {
  return createWorkerPool<MediaJobs>({
    name: 'media',
    entry: runnableModule('./media-worker', import.meta.url),
    size: settings.workers,
    queueLimit: settings.queueLimit,
    jobTimeoutMs: settings.jobTimeoutMs,
    maxHeapMb: 1024,
  });
}
