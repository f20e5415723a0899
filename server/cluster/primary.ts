/**
 * The primary of `omnigate start --workers N` (node:cluster): it serves nothing itself. It forks N workers,
 * each a whole server (its own usage recorder, video runner and caches) listening on the one shared port,
 * replaces a worker that dies with a backoff (restart-delay.ts), and on SIGTERM/SIGINT passes the signal on so
 * that each worker drains and flushes its usage records as a single server does, then ends when all are gone.
 *
 * Linux's default cluster scheduling is round-robin: the primary accepts each connection and hands it to the
 * next free worker, which spreads connections evenly (the kernel's own spread across processes accepting on
 * one socket is known to pile onto a few).
 */
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { nextCrashCount, restartDelay } from './restart-delay.js';

/** The environment variable that tells a worker its slot (0 … N-1); slot 0 runs the periodic purges. */
export const WORKER_INDEX_VARIABLE = 'OMNIGATE_WORKER_INDEX';
/** After the grace period, how long workers get to close before the primary kills them. */
const STOP_MARGIN_MS = 15_000;

export interface PrimaryOptions {
  workers: number;
  /** The module each worker runs (the server's entry point). */
  exec: string;
  logger: Logger;
  /** The workers' shutdown grace period; the primary waits that long and a margin before it kills one. */
  shutdownGraceMs: number;
  /** The port of OMNIGATE_METRICS_PORT, which the workers listen on too: its listening events are not the API's. */
  metricsPort?: number;
  /** Called once, when every worker of the first generation listens, with the port they share. */
  onListening(port: number, pids: number[]): void | Promise<void>;
}

interface Slot {
  index: number;
  worker?: Worker;
  startedAt: number;
  crashes: number;
  listened: boolean;
  timer?: NodeJS.Timeout;
}

/** Runs the workers until a signal stops them (or the first generation fails); answers the exit code. */
export function runPrimary(options: PrimaryOptions): Promise<number> {
  const { logger } = options;
  cluster.setupPrimary({ exec: options.exec, args: [] });
  const slots: Slot[] = Array.from({ length: options.workers }, (_, index) => ({
    index,
    startedAt: 0,
    crashes: 0,
    listened: false,
  }));
  let serving = false;
  let stopping = false;
  let exitCode = 0;
  let finish: (code: number) => void = () => {};
  const done = new Promise<number>((resolve) => {
    finish = resolve;
  });

  const live = () => slots.filter((slot) => slot.worker);
  const fork = (slot: Slot) => {
    slot.timer = undefined;
    slot.startedAt = Date.now();
    const worker = cluster.fork({ [WORKER_INDEX_VARIABLE]: String(slot.index) });
    slot.worker = worker;
    worker.on('listening', (address) => {
      if (options.metricsPort !== undefined && address.port === options.metricsPort) {
        return;
      }
      slot.listened = true;
      if (!serving && slots.every((each) => each.listened)) {
        serving = true;
        // A failure in the greeting is logged by onListening itself; nothing here may reject unhandled.
        void Promise.resolve(
          options.onListening(
            address.port,
            live().map((each) => each.worker!.process.pid!),
          ),
        ).catch((error: unknown) => options.logger.error({ err: error }, 'greeting after start failed'));
      }
    });
    worker.on('exit', (code, signal) => exited(slot, worker, code, signal));
  };

  const exited = (slot: Slot, worker: Worker, code: number | null, signal: string | null) => {
    if (slot.worker !== worker) {
      return;
    }
    slot.worker = undefined;
    if (stopping) {
      // A worker still starting dies of the SIGTERM itself (its handler is not installed yet): nothing was lost.
      if (code !== 0 && signal !== 'SIGTERM' && exitCode === 0) {
        exitCode = 1;
      }
      if (live().length === 0) {
        finish(exitCode);
      }
      return;
    }
    if (!serving) {
      // A worker of the first generation that dies before all listen (a port taken, a configuration the
      // registry refuses: it said why on stderr) would die again: stop, with its code.
      logger.error({ pid: worker.process.pid, code, signal }, 'a worker failed to start; stopping');
      stop(code || 1);
      return;
    }
    slot.crashes = nextCrashCount(slot.crashes, Date.now() - slot.startedAt);
    const delayMs = restartDelay(slot.crashes);
    logger.error(
      { worker: slot.index, pid: worker.process.pid, code, signal, restartInMs: delayMs },
      'worker exited; starting another',
    );
    slot.timer = setTimeout(() => fork(slot), delayMs);
  };

  const stop = (code: number) => {
    if (stopping) {
      return;
    }
    stopping = true;
    exitCode = code;
    for (const slot of slots) {
      clearTimeout(slot.timer);
    }
    const running = live();
    if (running.length === 0) {
      finish(exitCode);
      return;
    }
    for (const slot of running) {
      slot.worker!.process.kill('SIGTERM');
    }
    setTimeout(() => {
      for (const slot of live()) {
        logger.error({ pid: slot.worker!.process.pid }, 'worker did not stop in time; killing it');
        slot.worker!.process.kill('SIGKILL');
      }
    }, options.shutdownGraceMs + STOP_MARGIN_MS).unref();
  };

  const onSignal = (signal: NodeJS.Signals) => {
    if (!stopping) {
      logger.info({ signal, workers: live().length }, 'shutting down: stopping the workers');
    }
    stop(0);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  for (const slot of slots) {
    fork(slot);
  }
  return done;
}
