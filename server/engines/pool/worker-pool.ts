/**
 * A bounded pool of worker threads for the media engines, whose synthesis and rendering are CPU-bound and
 * would otherwise stop the event loop. A caller takes one of `size` slots for a whole generation
 * (`use(signal, steps)`): inside it, `steps.run(kind, input)` runs a job on the slot's own worker, and any
 * child process the generation starts (the audio encoder) runs under the same slot, so `size` bounds all media
 * work at once. Callers beyond the slots wait in a queue of at most `queueLimit`; the next one is refused with
 * 429 and a Retry-After from the measured job time. A generation that outlives `jobTimeoutMs` is stopped with
 * 504; one whose caller goes away is stopped at once. Stopping a running job terminates its worker (a
 * synchronous WebAssembly engine cannot be interrupted any other way); the slot starts a fresh one when next
 * needed. Workers idle for `idleMs` exit, so an unused pool holds no memory.
 */
import { Worker } from 'node:worker_threads';
import { ApiError } from '../../core/api-error.js';
import { errorOf, type JobReply, type JobTable } from './job-protocol.js';
import { needsTypeScriptLoader } from './runnable-module.js';

const BOOT = new URL('./worker-boot.mjs', import.meta.url);

export interface WorkerPoolOptions {
  /** What the pool is for, in errors and logs ("media"). */
  name: string;
  /** The worker's entry module (it calls `serveJobs`). */
  entry: URL;
  size: number;
  queueLimit: number;
  jobTimeoutMs: number;
  idleMs?: number;
  /** Heap limit of each worker, in MiB. */
  maxHeapMb?: number;
  /**
   * Young-generation limit of each worker, in MiB (V8's default lets it grow to 32). A worker that builds large
   * long-lived tables at start makes V8 grow it to the limit and keep it committed, though its jobs then allocate
   * little.
   */
  maxYoungMb?: number;
}

/** What a generation can do while it holds a slot. */
export interface RunOptions {
  /** Called with 0–100 as the job reports how far it is. */
  onProgress?: (percent: number) => void;
}

export interface PoolSlot<J extends JobTable> {
  run<K extends keyof J & string>(kind: K, input: Parameters<J[K]>[0], options?: RunOptions): Promise<Awaited<ReturnType<J[K]>>>;
  /** Fires when the generation must stop: caller gone, timeout or shutdown. Pass it to child processes. */
  signal: AbortSignal;
}

export interface PoolStats {
  size: number;
  busy: number;
  queued: number;
  workers: number;
}

export interface WorkerPool<J extends JobTable> {
  use<T>(signal: AbortSignal, steps: (slot: PoolSlot<J>) => Promise<T>): Promise<T>;
  stats(): PoolStats;
  close(): Promise<void>;
}

interface Slot {
  worker?: Worker;
  /** Child processes the running job named, which must not outlive it (see `JobReporter.childProcess`). */
  children: Set<number>;
  busy: boolean;
  idleTimer?: NodeJS.Timeout;
}

interface Waiter {
  grant: (slot: Slot) => void;
  refuse: (reason: unknown) => void;
}

export function createWorkerPool<J extends JobTable>(options: WorkerPoolOptions): WorkerPool<J> {
  const slots: Slot[] = Array.from({ length: options.size }, () => ({ busy: false, children: new Set<number>() }));
  const queue: Waiter[] = [];
  const idleMs = options.idleMs ?? 60_000;
  let closed = false;
  let nextJobId = 1;
  /** Moving average of a generation's duration, for Retry-After. */
  let averageMs = 1_000;

  function startWorker(slot: Slot): Worker {
    // From the sources the worker first registers tsx (worker-boot.mjs); the compiled build starts the entry itself.
    const worker = new Worker(needsTypeScriptLoader(options.entry) ? BOOT : options.entry, {
      workerData: { entry: options.entry.href },
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: options.maxHeapMb, maxYoungGenerationSizeMb: options.maxYoungMb },
      stdout: false,
      stderr: false,
    });
    worker.unref();
    worker.on('error', () => {
      // The job's own listener reports the failure; a worker that died is replaced at the next job.
      if (slot.worker === worker) {
        slot.worker = undefined;
      }
    });
    worker.on('exit', () => {
      if (slot.worker === worker) {
        slot.worker = undefined;
      }
    });
    slot.worker = worker;
    return worker;
  }

  function killChildren(slot: Slot): void {
    for (const pid of slot.children) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone: it ended between its exit and the worker's report of it.
      }
    }
    slot.children.clear();
  }

  function stopWorker(slot: Slot): void {
    killChildren(slot);
    const worker = slot.worker;
    slot.worker = undefined;
    void worker?.terminate();
  }

  function release(slot: Slot): void {
    const next = queue.shift();
    if (next) {
      next.grant(slot);
      return;
    }
    slot.busy = false;
    clearTimeout(slot.idleTimer);
    slot.idleTimer = setTimeout(() => stopWorker(slot), idleMs).unref();
  }

  function acquire(signal: AbortSignal): Promise<Slot> {
    const free = slots.find((slot) => !slot.busy);
    if (free) {
      free.busy = true;
      clearTimeout(free.idleTimer);
      return Promise.resolve(free);
    }
    if (queue.length >= options.queueLimit) {
      const seconds = Math.min(60, Math.max(1, Math.ceil((averageMs * (queue.length + 1)) / options.size / 1000)));
      return Promise.reject(
        new ApiError(429, `The ${options.name} engines are busy: ${options.size} running and ${queue.length} waiting. Retry after ${seconds} s.`, {
          code: 'engine_busy',
          headers: { 'retry-after': String(seconds) },
        }),
      );
    }
    return new Promise<Slot>((resolve, reject) => {
      const waiter: Waiter = {
        grant: (slot) => {
          signal.removeEventListener('abort', leave);
          clearTimeout(slot.idleTimer);
          resolve(slot);
        },
        refuse: reject,
      };
      const leave = () => {
        const index = queue.indexOf(waiter);
        if (index >= 0) {
          queue.splice(index, 1);
        }
        reject(signal.reason);
      };
      signal.addEventListener('abort', leave, { once: true });
      queue.push(waiter);
    });
  }

  function runOn<K extends keyof J & string>(slot: Slot, kind: K, input: unknown, signal: AbortSignal, runOptions: RunOptions = {}): Promise<Awaited<ReturnType<J[K]>>> {
    signal.throwIfAborted();
    const worker = slot.worker ?? startWorker(slot);
    const id = nextJobId++;
    return new Promise((resolve, reject) => {
      const finish = () => {
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        signal.removeEventListener('abort', onAbort);
      };
      const onMessage = (reply: JobReply) => {
        if (reply.id !== id) {
          return;
        }
        if ('progress' in reply) {
          runOptions.onProgress?.(reply.progress);
          return;
        }
        if ('childPid' in reply) {
          if (reply.running) {
            slot.children.add(reply.childPid);
          } else {
            slot.children.delete(reply.childPid);
          }
          return;
        }
        finish();
        if (reply.ok) {
          resolve(reply.output as Awaited<ReturnType<J[K]>>);
        } else {
          reject(errorOf(reply.failure, options.name));
        }
      };
      const onError = (error: Error) => {
        finish();
        killChildren(slot);
        reject(new ApiError(500, `The ${options.name} engine stopped: ${error.message}`, { code: 'engine_failed', cause: error }));
      };
      const onExit = (code: number) => {
        finish();
        killChildren(slot);
        reject(new ApiError(500, `The ${options.name} engine exited (code ${code}) during the job`, { code: 'engine_failed' }));
      };
      const onAbort = () => {
        finish();
        stopWorker(slot);
        reject(signal.reason);
      };
      worker.on('message', onMessage);
      worker.once('error', onError);
      worker.once('exit', onExit);
      signal.addEventListener('abort', onAbort, { once: true });
      worker.postMessage({ id, kind, input });
    });
  }

  return {
    async use(callerSignal, steps) {
      if (closed) {
        throw new ApiError(503, `The ${options.name} engines are shutting down`, { code: 'shutting_down', expected: true });
      }
      callerSignal.throwIfAborted();
      const slot = await acquire(callerSignal);
      const generation = new AbortController();
      const timer = setTimeout(() => {
        generation.abort(
          new ApiError(504, `The ${options.name} generation took longer than ${options.jobTimeoutMs} ms and was stopped`, { code: 'generation_timeout' }),
        );
      }, options.jobTimeoutMs);
      // The caller's signal is linked by a listener, not `AbortSignal.any`: in Node 20 that costs ~30 µs a call in
      // weak references and finalization (bench/README.md), and the tokenizer runs one generation per count.
      const onCallerAbort = () => generation.abort(callerSignal.reason);
      callerSignal.addEventListener('abort', onCallerAbort, { once: true });
      if (callerSignal.aborted) {
        onCallerAbort();
      }
      const signal = generation.signal;
      const started = performance.now();
      try {
        return await steps({ signal, run: (kind, input, runOptions) => runOn(slot, kind, input, signal, runOptions) });
      } catch (error) {
        // A child process killed by the signal reports its own error; the reason the signal fired is the truth.
        throw signal.aborted ? signal.reason : error;
      } finally {
        clearTimeout(timer);
        callerSignal.removeEventListener('abort', onCallerAbort);
        averageMs = averageMs * 0.8 + (performance.now() - started) * 0.2;
        if (signal.aborted) {
          stopWorker(slot);
        }
        release(slot);
      }
    },
    stats() {
      return {
        size: options.size,
        busy: slots.filter((slot) => slot.busy).length,
        queued: queue.length,
        workers: slots.filter((slot) => slot.worker).length,
      };
    },
    async close() {
      closed = true;
      for (const waiter of queue.splice(0)) {
        waiter.refuse(new ApiError(503, `The ${options.name} engines are shutting down`, { code: 'shutting_down', expected: true }));
      }
      await Promise.all(
        slots.map(async (slot) => {
          clearTimeout(slot.idleTimer);
          killChildren(slot);
          const worker = slot.worker;
          slot.worker = undefined;
          await worker?.terminate();
        }),
      );
    },
  };
}
