/**
 * Background threads give way to the main thread. On Linux a thread is a task with a nice value of its own, found
 * through /proc/thread-self, so a worker can lower its own scheduling priority without touching the main thread's.
 * The tokenizer thread does (its counts are bookkeeping for usage records): when it and the event loop want the same
 * core, the loop gets ~90% of it instead of half, so a batch of counts no longer delays the requests that arrive
 * meanwhile (bench/README.md, fifth pass). Elsewhere, or where the niceness cannot be changed, nothing happens.
 */
import { spawnSync } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** The niceness background threads take: the main thread, at 0, then weighs ~9× as much in the scheduler. */
export const BACKGROUND_NICENESS = 10;
/**
 * A thread lowered to this niceness (work nobody waits for: background embedding) also enters Linux's idle
 * scheduling class, SCHED_IDLE. Niceness alone only weighs the shares: a nice-19 thread that holds the core when
 * the event loop wakes may keep it for the rest of its slice (milliseconds under EEVDF), and each chat call wakes
 * the loop several times. A SCHED_IDLE thread is preempted at once by any other thread that wakes, and runs only
 * on time no other thread wants.
 */
export const IDLE_CLASS_NICENESS = 19;
/** SCHED_IDLE's number in Linux's sched.h, as field 41 (`policy`) of /proc/<tid>/stat shows it. */
export const SCHED_IDLE = 5;

/** The calling thread's Linux thread id, or undefined where /proc/thread-self does not exist. */
function ownThreadId(): number | undefined {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(tid) && tid > 0 ? tid : undefined;
  } catch {
    return undefined;
  }
}

/** Lowers the calling thread's priority to `niceness` (never raises it); does nothing where that is not possible. */
export function lowerOwnThreadPriority(niceness = BACKGROUND_NICENESS): void {
  const tid = ownThreadId();
  if (tid === undefined) {
    return;
  }
  try {
    if (getPriority(tid) < niceness) {
      setPriority(tid, niceness);
    }
  } catch {
    // Not permitted here (a sandbox without setpriority): the thread keeps the process's priority.
  }
  if (niceness >= IDLE_CLASS_NICENESS) {
    // Node has no sched_setscheduler; util-linux's chrt (in every Debian base system) sets it for one thread id.
    // Entering SCHED_IDLE needs no privilege. Without chrt, the thread keeps its niceness alone.
    spawnSync('chrt', ['--idle', '--pid', '0', String(tid)], { stdio: 'ignore', timeout: 5_000 });
  }
}
