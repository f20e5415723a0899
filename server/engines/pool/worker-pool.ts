/**
 * A bounded pool of worker threads for the media engines, whose synthesis and rendering are CPU-bound and
 * would otherwise stop the event loop. A caller takes one of `size` slots for a whole generation
 * (`use(signal, steps, { owner })`): inside it, `steps.run(kind, input)` runs a job on the slot's own worker, and
 * any child process the generation starts (the audio encoder) runs under the same slot, so `size` bounds all
 * media work at once. Callers beyond the slots wait in one queue per owner (the API key), served round-robin
 * (fair-queue.ts), so a key that queues a thousand jobs delays another key's one job by at most one of its own.
 * Two caps refuse with 429 and a Retry-After from the measured job time: `queueLimit` jobs waiting in all, and
 * `perOwnerLimit` jobs queued or running for one owner. A generation that outlives `jobTimeoutMs` is stopped
 * with 504; one whose caller goes away is stopped at once. Stopping a running job terminates its worker (a
 * synchronous WebAssembly engine cannot be interrupted any other way); the slot starts a fresh one when next
 * needed. A worker that runs out of its `resourceLimits` dies with ERR_WORKER_OUT_OF_MEMORY: its job is a 413
 * `engine_out_of_memory` and the next job gets a fresh worker. Workers idle for `idleMs` exit, so an unused pool
 * holds no memory.
 */
import { Worker, type ResourceLimits } from 'node:worker_threads';
import { ApiError } from '../../core/api-error.js';
import { FairQueue } from './fair-queue.js';
import { errorOf, type JobReply, type JobTable } from './job-protocol.js';
import { needsTypeScriptLoader } from './runnable-module.js';

const BOOT = new URL('./worker-boot.mjs', import.meta.url);

export interface WorkerPoolOptions {
  /** What the pool is for, in errors and logs ("media"). */
  name: string;
  /** The worker's entry module (it calls `serveJobs`). */
  entry: URL;
  size: number;
  /** Jobs that may wait for a slot, all owners together; the next is a 429. */
  queueLimit: number;
  /** Jobs one owner may have queued or running; the next is a 429. Callers that name no owner are not counted. */
  perOwnerLimit?: number;
  jobTimeoutMs: number;
  /**
   * Added to `jobTimeoutMs` for a job that has to start its slot's worker first. Start-up (loading the entry and
   * what it imports) is not the job's work: on a loaded machine it can take seconds, and a job that timed out
   * while its worker was still starting would end that worker and leave the next job to start another.
   */
  startupMs?: number;
  idleMs?: number;
  /**
   * Memory limits of each worker (Node's `Worker` resourceLimits). A job that needs more kills its worker; the
   * job is refused with 413 and the worker replaced. Set the young generation too for a worker that builds large
   * long-lived tables at start: V8 grows it to its limit (32 MiB by default) and keeps it committed.
   */
  resourceLimits?: ResourceLimits;
  /**
   * The scheduling niceness each worker thread gives itself on start (Linux; see thread-priority.ts): background
   * pools take 10 or 19 so that, on a busy core, the event loop serving chat runs first. Unset: the process's.
   */
  niceness?: number;
}

/** What a generation can do while it holds a slot. */
export interface RunOptions {
  /** Called with 0–100 as the job reports how far it is. */
  onProgress?: (percent: number) => void;
  /** Called with each part of the output the job sends ahead of its result (`JobReporter.part`), in order. */
  onPart?: (part: unknown) => void;
  /** ArrayBuffers inside `input` handed to the worker instead of copied (they are unusable here afterwards). */
  transfer?: ArrayBuffer[];
}

export interface PoolSlot<J extends JobTable> {
  run<K extends keyof J & string>(
    kind: K,
    input: Parameters<J[K]>[0],
    options?: RunOptions,
  ): Promise<Awaited<ReturnType<J[K]>>>;
  /** Fires when the generation must stop: caller gone, timeout or shutdown. Pass it to child processes. */
  signal: AbortSignal;
}

export interface PoolStats {
  size: number;
  busy: number;
  queued: number;
  workers: number;
  /** Owners with jobs waiting. */
  owners: number;
}

export interface UseOptions {
  /** Whose job this is (the API key id): it queues fairly with other owners' and counts against `perOwnerLimit`. */
  owner?: string;
}

export interface WorkerPool<J extends JobTable> {
  use<T>(signal: AbortSignal, steps: (slot: PoolSlot<J>) => Promise<T>, useOptions?: UseOptions): Promise<T>;
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
  const queue = new FairQueue<Waiter>();
  /** Jobs queued or running per owner, for `perOwnerLimit`; an owner with none has no entry. */
  const load = new Map<string, number>();
  const idleMs = options.idleMs ?? 60_000;
  let closed = false;
  let nextJobId = 1;
  /** Moving average of a generation's duration, for Retry-After. */
  let averageMs = 1_000;

  function startWorker(slot: Slot): Worker {
    // From the sources the worker first registers tsx (worker-boot.mjs); the compiled build starts the entry itself.
    const worker = new Worker(needsTypeScriptLoader(options.entry) ? BOOT : options.entry, {
      workerData: { entry: options.entry.href, niceness: options.niceness },
      execArgv: [],
      resourceLimits: options.resourceLimits,
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

  /** A 429 whose Retry-After is the time `jobsAhead` generations take, in whole seconds from 1 to 60. */
  function busy(code: string, message: (seconds: number) => string, jobsAhead: number): ApiError {
    const seconds = Math.min(60, Math.max(1, Math.ceil((averageMs * jobsAhead) / options.size / 1000)));
    return new ApiError(429, message(seconds), { code, headers: { 'retry-after': String(seconds) } });
  }

  /** Counts a job against its owner's cap, or refuses it; `free` undoes the count when the job is over. */
  function admit(owner: string | undefined): { free: () => void } {
    if (owner === undefined || options.perOwnerLimit === undefined) {
      return { free: () => undefined };
    }
    const held = load.get(owner) ?? 0;
    if (held >= options.perOwnerLimit) {
      const running = held - queue.queuedBy(owner);
      // One of its running jobs ends within about one job's time; a key whose jobs all wait gets its next turn
      // after at most one job of each owner in the rotation.
      throw busy(
        'key_jobs_limit',
        (seconds) =>
          `This API key already has ${held} ${options.name} jobs queued or running, the most one key may have (${running} running). Retry after ${seconds} s.`,
        running > 0 ? options.size : queue.owners + 1,
      );
    }
    load.set(owner, held + 1);
    return {
      free() {
        const left = (load.get(owner) ?? 1) - 1;
        if (left > 0) {
          load.set(owner, left);
        } else {
          load.delete(owner);
        }
      },
    };
  }

  function acquire(signal: AbortSignal, owner: string): Promise<Slot> {
    const free = slots.find((slot) => !slot.busy);
    if (free) {
      free.busy = true;
      clearTimeout(free.idleTimer);
      return Promise.resolve(free);
    }
    if (queue.size >= options.queueLimit) {
      return Promise.reject(
        busy(
          'engine_busy',
          (seconds) =>
            `The ${options.name} engines are busy: ${options.size} running and ${queue.size} waiting, the most that may wait. Retry after ${seconds} s.`,
          queue.size + 1,
        ),
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
        queue.remove(owner, waiter);
        reject(signal.reason);
      };
      signal.addEventListener('abort', leave, { once: true });
      queue.push(owner, waiter);
    });
  }

  /** The answer to a job that outgrew the worker's memory: its input is too large for this server. */
  function outOfMemory(cause: Error): ApiError {
    const heap = options.resourceLimits?.maxOldGenerationSizeMb;
    const limit = heap === undefined ? '' : ` (${heap} MB)`;
    return new ApiError(
      413,
      `The ${options.name} job needed more memory than a ${options.name} worker may use${limit} and was stopped; the input is too large to process here.`,
      {
        code: 'engine_out_of_memory',
        cause,
      },
    );
  }

  function runOn<K extends keyof J & string>(
    slot: Slot,
    kind: K,
    input: unknown,
    signal: AbortSignal,
    runOptions: RunOptions = {},
  ): Promise<Awaited<ReturnType<J[K]>>> {
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
        if ('part' in reply) {
          runOptions.onPart?.(reply.part);
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
        if ((error as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY') {
          reject(outOfMemory(error));
          return;
        }
        reject(
          new ApiError(500, `The ${options.name} engine stopped: ${error.message}`, {
            code: 'engine_failed',
            cause: error,
          }),
        );
      };
      const onExit = (code: number) => {
        finish();
        killChildren(slot);
        reject(
          new ApiError(500, `The ${options.name} engine exited (code ${code}) during the job`, {
            code: 'engine_failed',
          }),
        );
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
      worker.postMessage({ id, kind, input }, runOptions.transfer ?? []);
    });
  }

  return {
    async use(callerSignal, steps, useOptions = {}) {
      if (closed) {
        throw new ApiError(503, `The ${options.name} engines are shutting down`, {
          code: 'shutting_down',
          expected: true,
        });
      }
      callerSignal.throwIfAborted();
      const admitted = admit(useOptions.owner);
      let slot: Slot;
      try {
        // Jobs without an owner (internal work) share one queue of their own in the rotation.
        slot = await acquire(callerSignal, useOptions.owner ?? '');
      } catch (error) {
        admitted.free();
        throw error;
      }
      const generation = new AbortController();
      const timeoutMs = options.jobTimeoutMs + (slot.worker ? 0 : (options.startupMs ?? 0));
      const timer = setTimeout(() => {
        generation.abort(
          new ApiError(
            504,
            `The ${options.name} generation took longer than ${options.jobTimeoutMs} ms and was stopped`,
            { code: 'generation_timeout' },
          ),
        );
      }, timeoutMs);
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
        admitted.free();
        release(slot);
      }
    },
    stats() {
      return {
        size: options.size,
        busy: slots.filter((slot) => slot.busy).length,
        queued: queue.size,
        owners: queue.owners,
        workers: slots.filter((slot) => slot.worker).length,
      };
    },
    async close() {
      closed = true;
      for (const waiter of queue.drain()) {
        waiter.refuse(
          new ApiError(503, `The ${options.name} engines are shutting down`, { code: 'shutting_down', expected: true }),
        );
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
