/**
 * How long the primary waits before replacing a worker that died: doubling from RESTART_BASE_MS to
 * RESTART_MAX_MS with each crash in a row, so a worker that dies at once (a full disk, a broken upstream
 * configuration that only shows at load) does not spin the CPU with forks, while a one-off crash is replaced
 * almost at once. A worker that stayed up STABLE_AFTER_MS clears the count.
 */
export const RESTART_BASE_MS = 100;
export const RESTART_MAX_MS = 30_000;
export const STABLE_AFTER_MS = 60_000;

/** The wait before the next start, after `crashesInARow` crashes (1 for the first). */
export function restartDelay(crashesInARow: number): number {
  const exponent = Math.max(0, crashesInARow - 1);
  return Math.min(RESTART_MAX_MS, RESTART_BASE_MS * 2 ** Math.min(exponent, 20));
}

/** The crash count after a worker that lived `livedMs` died: reset when it had been stable. */
export function nextCrashCount(previous: number, livedMs: number): number {
  return livedMs >= STABLE_AFTER_MS ? 1 : previous + 1;
}
