/**
 * Background threads give way to the main thread. On Linux a thread is a task with a nice value of its own, found
 * through /proc/thread-self, so a worker can lower its own scheduling priority without touching the main thread's.
 * The tokenizer thread does (its counts are bookkeeping for usage records): when it and the event loop want the same
 * core, the loop gets ~90% of it instead of half, so a batch of counts no longer delays the requests that arrive
 * meanwhile (bench/README.md, fifth pass). Elsewhere, or where the niceness cannot be changed, nothing happens.
 */
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** The niceness background threads take: the main thread, at 0, then weighs ~9× as much in the scheduler. */
export const BACKGROUND_NICENESS = 10;

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
}
