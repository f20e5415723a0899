/** The jobs of the pool's own test workers: they answer, spin the CPU, fail, outgrow their heap or kill their thread. */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { ApiError } from '../../server/core/api-error.js';
import { threadCpuMs } from '../helpers/cpu-time.js';

/** How long pool-slow-start-worker.ts takes to start, at least. */
export const SLOW_START_MS = 1_500;

export const poolTestJobs = {
  /** The worker thread's own niceness (Linux: field 19 of /proc/thread-self/stat), or null elsewhere. */
  async niceness(_input: Record<string, never>) {
    try {
      const stat = readFileSync('/proc/thread-self/stat', 'utf8');
      return { niceness: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]) as number | null };
    } catch {
      return { niceness: null };
    }
  },
  async echo(input: { text: string }) {
    return { text: input.text, bytes: new TextEncoder().encode(input.text) };
  },
  /** Spins until the thread has used `ms` of CPU time, so a busy machine makes it longer but not cheaper. */
  async spin(input: { ms: number }) {
    const end = threadCpuMs() + input.ms;
    while (threadCpuMs() < end) {
      // Busy on purpose: a synchronous engine that cannot be interrupted except by terminating its thread.
    }
    return { spun: input.ms };
  },
  async count(input: { to: number }, reporter: { progress(percent: number): void }) {
    for (let step = 1; step <= input.to; step += 1) {
      reporter.progress(Math.round((step / input.to) * 100));
    }
    return { counted: input.to };
  },
  /** Starts a long `sleep` child, names it to the pool, answers its pid, then spins until stopped. */
  async child(
    input: { ms: number },
    reporter: { childProcess(pid: number, running: boolean): void; progress(percent: number): void },
  ) {
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    reporter.childProcess(child.pid!, true);
    reporter.progress(child.pid!);
    const end = Date.now() + input.ms;
    await new Promise((resolve) => setTimeout(resolve, 50));
    while (Date.now() < end) {
      // Busy, as a drawing engine is while its encoder runs.
    }
    return { pid: child.pid };
  },
  async refuse(input: { param: string }) {
    throw new ApiError(400, `bad ${input.param}`, { code: 'bad_value', param: input.param });
  },
  /** Keeps allocating small objects until V8 reaches the worker's heap limit. */
  async hog() {
    const kept: unknown[] = [];
    for (;;) {
      kept.push(Array.from({ length: 10_000 }, (_, index) => ({ index })));
    }
  },
  async crash() {
    process.exit(3);
  },
};
