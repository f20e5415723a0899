/**
 * The loop every retention shares: purge at start, then every `intervalMs` on an unref'd timer (it never holds
 * the process), never two purges at once (a slow one is not stacked), a failure handed to `onError` and tried
 * again at the next tick (the database may be back by then).
 */
export interface PurgeSchedule {
  intervalMs: number;
  /** Unix seconds. */
  now?: () => number;
  /** Called after each purge that removed something. */
  onPurge?: (count: number) => void;
  /** A purge that failed (the database unreachable); the next one tries again. */
  onError?: (error: unknown) => void;
}

/** Runs `purgeAt(now)` now and on every tick; returns the function that stops it. */
export function startPeriodicPurge(purgeAt: (now: number) => Promise<number>, schedule: PurgeSchedule): () => void {
  const now = schedule.now ?? (() => Math.floor(Date.now() / 1000));
  let running = false;
  const purge = async () => {
    if (running) {
      return;
    }
    running = true;
    try {
      const count = await purgeAt(now());
      if (count > 0) {
        schedule.onPurge?.(count);
      }
    } catch (error) {
      schedule.onError?.(error);
    } finally {
      running = false;
    }
  };
  void purge();
  const timer = setInterval(() => void purge(), schedule.intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
