/**
 * The counters behind limits, as one interface with two implementations: in process (memory-counters.ts) and
 * in Redis (redis-counters.ts, Lua scripts, shared by every instance). Both implement the same rules, checked
 * by one suite (limits/counter-store.test.ts):
 *
 * - requests per minute: a sliding log of the last 60 s of admitted requests (exact: never more than `rpm` in any
 *   60 s);
 * - tokens per minute: a bucket that drains at `tpm` per minute; a call adds its estimate when admitted and the
 *   difference to its real count when settled (never below empty); a call bigger than the whole minute passes
 *   only when the bucket is empty;
 * - concurrent requests: one lease per call, expiring `leaseMs` after its last renewal, so a crashed call's slot
 *   frees itself;
 * - media units per UTC day and spend per UTC day, month or in total: settled amounts plus the reservations of
 *   calls in flight, each reservation expiring with its lease.
 *
 * A call is refused when any scope (its key, its project) refuses; nothing is counted for a refused call, and
 * all scopes change in one step.
 */
import type { Limits } from '../core/limits.js';

export type LimitKind = 'rpm' | 'tpm' | 'parallel' | 'media' | 'budget';

export interface ScopeLimits {
  /** `key:<id>` or `project:<name>`. */
  scope: string;
  limits: Limits;
}

export interface Admit {
  scopes: ScopeLimits[];
  /** Unique per call. */
  lease: string;
  /** Milliseconds since the epoch. */
  now: number;
  leaseMs: number;
  /** Estimates reserved until the call settles (0 for calls that spend nothing). */
  tokens: number;
  costUsd: number;
  mediaUnits: number;
  /**
   * False for calls that cannot spend (lists, lookups, files, count_tokens): a used-up budget does not refuse
   * them, so a key whose budget is spent can still read its usage. Absent means true.
   */
  spends?: boolean;
}

/** The OpenAI-style figures of one rate (the stricter scope's), for the `x-ratelimit-*` headers. */
export interface RateState {
  limit: number;
  remaining: number;
  /** Milliseconds until the next unit frees. */
  resetMs: number;
}

export interface RateHeaders {
  requests?: RateState;
  tokens?: RateState;
}

export type Admission =
  | { admitted: true; rates: RateHeaders }
  | { admitted: false; kind: LimitKind; scope: string; retryAfterMs: number; rates: RateHeaders };

export interface Settle {
  scopes: ScopeLimits[];
  lease: string;
  now: number;
  /** Real tokens minus the estimate admitted (may be negative). */
  tokensDelta: number;
  costUsd: number;
  mediaUnits: number;
}

export interface CounterStore {
  admit(request: Admit): Promise<Admission>;
  settle(request: Settle): Promise<void>;
  /**
   * Extends the leases of running calls (long streams) to `now + leaseMs`, all at once: `leases` maps each scope
   * (`key:<id>`, `project:<name>`) to the leases it holds. A lease that already expired (at or before `now`) or
   * was settled is never revived; an expired one is released as an admission would release it.
   */
  renewLeases(leases: ReadonlyMap<string, readonly string[]>, now: number, leaseMs: number): Promise<void>;
  /** Spend settled in the current period of a scope (for tests and reports). */
  spent(scope: ScopeLimits, now: number): Promise<number>;
  close(): Promise<void>;
}

const MINUTE_MS = 60_000;
export const WINDOW_MS = MINUTE_MS;

/** `YYYY-MM-DD` (UTC). */
export function dayOf(now: number): string {
  return new Date(now).toISOString().slice(0, 10);
}

/** The id of the current budget period: a UTC day, a UTC month or `total`. */
export function periodOf(limits: Limits, now: number): string {
  const period = limits.budgetPeriod ?? 'month';
  if (period === 'total') {
    return 'total';
  }
  const iso = new Date(now).toISOString();
  return period === 'day' ? iso.slice(0, 10) : iso.slice(0, 7);
}

/** Milliseconds until the current budget period ends (a day for `total`: retrying cannot help, the header says so). */
export function periodEndsIn(limits: Limits, now: number): number {
  const date = new Date(now);
  if ((limits.budgetPeriod ?? 'month') === 'month') {
    return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1) - now;
  }
  return dayEndsIn(now);
}

export function dayEndsIn(now: number): number {
  const date = new Date(now);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + 1) - now;
}
