import { describe, expect, it } from 'vitest';
import { nextCrashCount, RESTART_BASE_MS, RESTART_MAX_MS, restartDelay, STABLE_AFTER_MS } from './restart-delay.js';

describe('restartDelay', () => {
  it('doubles with each crash in a row from the base, up to the cap', () => {
    expect([1, 2, 3, 4].map(restartDelay)).toEqual([
      RESTART_BASE_MS,
      RESTART_BASE_MS * 2,
      RESTART_BASE_MS * 4,
      RESTART_BASE_MS * 8,
    ]);
    expect(restartDelay(30)).toBe(RESTART_MAX_MS);
    expect(restartDelay(10_000)).toBe(RESTART_MAX_MS);
  });

  it('counts crashes in a row, and starts again from one after a stable run', () => {
    expect(nextCrashCount(0, 10)).toBe(1);
    expect(nextCrashCount(3, STABLE_AFTER_MS - 1)).toBe(4);
    expect(nextCrashCount(7, STABLE_AFTER_MS)).toBe(1);
  });
});
