/**
 * CPU-time measures for tests about blocking and boundedness. Wall-clock time depends on what else the machine
 * runs (on a busy 2-core machine a 5 ms slice can take 200 ms of wall time), CPU time does not: a thread waiting
 * for a core accrues none. Linux only: per-thread times come from /proc (schedstat: nanoseconds on a CPU).
 */
import { readFileSync } from 'node:fs';

/** Nanoseconds the thread has run on a CPU, in ms. `tid` defaults to the calling thread. */
export function threadCpuMs(pid?: number, tid = pid): number {
  const path = pid === undefined ? '/proc/thread-self/schedstat' : `/proc/${pid}/task/${tid}/schedstat`;
  return Number(readFileSync(path, 'utf8').split(' ')[0]) / 1e6;
}

/** CPU time of a whole process (every thread, user and system), in ms: this one, or another by pid. */
export function processCpuMs(pid?: number): number {
  if (pid === undefined) {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  }
  // /proc/<pid>/stat: utime and stime are fields 14 and 15, in clock ticks (100 a second on Linux); the command
  // name in field 2 may hold spaces, so fields are counted after its closing parenthesis.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * Runs `work` while a 1 ms timer reads this thread's CPU time at each turn of the event loop. `longestHoldMs` is
 * the most CPU the thread spent between two turns (what one synchronous stretch of work cost, however long the
 * machine made it in wall time); `cpuMs` is the process's CPU time over the whole work, worker threads included.
 */
export async function measureLoopHold<T>(
  work: () => Promise<T>,
): Promise<{ result: T; longestHoldMs: number; cpuMs: number }> {
  let last = threadCpuMs();
  let longestHoldMs = 0;
  const timer = setInterval(() => {
    const now = threadCpuMs();
    longestHoldMs = Math.max(longestHoldMs, now - last);
    last = now;
  }, 1);
  const cpuBefore = processCpuMs();
  try {
    const result = await work();
    const cpuMs = processCpuMs() - cpuBefore;
    longestHoldMs = Math.max(longestHoldMs, threadCpuMs() - last);
    return { result, longestHoldMs, cpuMs };
  } finally {
    clearInterval(timer);
  }
}
