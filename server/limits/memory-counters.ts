/**
 * The in-process counters (no `OMNIGATE_REDIS_URL`): exact for one instance, by the rules of counter-store.ts.
 * Each operation runs to completion on the event loop, which makes it as atomic as the Redis scripts.
 */
import {
  type Admission,
  type Admit,
  type CounterStore,
  type RateHeaders,
  type ScopeLimits,
  type Settle,
  dayEndsIn,
  dayOf,
  periodEndsIn,
  periodOf,
  WINDOW_MS,
} from './counter-store.js';

interface ScopeState {
  /** Admission times of the last minute, oldest first. */
  requests: number[];
  bucket: { level: number; at: number };
  /** Lease → expiry. */
  parallel: Map<string, number>;
  /** Lease → its reservation and expiry. */
  reservations: Map<string, { costUsd: number; mediaUnits: number; expires: number }>;
  reservedCost: number;
  reservedMedia: number;
  /** `media:<day>` and `spend:<period>` → settled amount. */
  settled: Map<string, number>;
}

export function createMemoryCounters(): CounterStore {
  const scopes = new Map<string, ScopeState>();

  function stateOf(scope: string): ScopeState {
    let state = scopes.get(scope);
    if (!state) {
      state = {
        requests: [],
        bucket: { level: 0, at: 0 },
        parallel: new Map(),
        reservations: new Map(),
        reservedCost: 0,
        reservedMedia: 0,
        settled: new Map(),
      };
      scopes.set(scope, state);
    }
    return state;
  }

  function sweep(state: ScopeState, now: number, tpm: number | undefined): number {
    while (state.requests.length > 0 && state.requests[0]! <= now - WINDOW_MS) {
      state.requests.shift();
    }
    for (const [lease, expires] of state.parallel) {
      if (expires <= now) {
        state.parallel.delete(lease);
      }
    }
    for (const [lease, reservation] of state.reservations) {
      if (reservation.expires <= now) {
        release(state, lease);
      }
    }
    const level = tpm ? Math.max(0, state.bucket.level - ((now - state.bucket.at) * tpm) / WINDOW_MS) : 0;
    state.bucket = { level, at: now };
    return level;
  }

  function release(state: ScopeState, lease: string): void {
    const reservation = state.reservations.get(lease);
    if (reservation) {
      state.reservations.delete(lease);
      state.reservedCost = Math.max(0, state.reservedCost - reservation.costUsd);
      state.reservedMedia = Math.max(0, state.reservedMedia - reservation.mediaUnits);
    }
  }

  function settledAt(state: ScopeState, name: string): number {
    return state.settled.get(name) ?? 0;
  }

  function addSettled(state: ScopeState, name: string, amount: number): void {
    if (amount > 0) {
      state.settled.set(name, settledAt(state, name) + amount);
    }
  }

  /** Keeps the stricter (fewest remaining) of two scopes' figures. */
  function stricter(
    current: RateHeaders[keyof RateHeaders],
    next: NonNullable<RateHeaders[keyof RateHeaders]>,
  ): NonNullable<RateHeaders[keyof RateHeaders]> {
    return current && current.remaining <= next.remaining ? current : next;
  }

  return {
    async admit(request: Admit): Promise<Admission> {
      const { now } = request;
      const rates: RateHeaders = {};
      const checked: Array<{ scope: ScopeLimits; state: ScopeState; level: number }> = [];
      for (const scope of request.scopes) {
        const { limits } = scope;
        const state = stateOf(scope.scope);
        const level = sweep(state, now, limits.tpm);
        checked.push({ scope, state, level });
        const refuse = (kind: Extract<Admission, { admitted: false }>['kind'], retryAfterMs: number): Admission => ({
          admitted: false,
          kind,
          scope: scope.scope,
          retryAfterMs: Math.max(1, Math.ceil(retryAfterMs)),
          rates,
        });
        if (limits.rpm !== undefined) {
          const count = state.requests.length;
          const resetMs = count > 0 ? state.requests[0]! + WINDOW_MS - now : WINDOW_MS;
          if (count + 1 > limits.rpm) {
            rates.requests = stricter(rates.requests, { limit: limits.rpm, remaining: 0, resetMs });
            return refuse('rpm', resetMs);
          }
          rates.requests = stricter(rates.requests, { limit: limits.rpm, remaining: limits.rpm - count - 1, resetMs });
        }
        if (limits.tpm !== undefined) {
          const rate = limits.tpm / WINDOW_MS;
          if (request.tokens > 0 && level > 0 && level + request.tokens > limits.tpm) {
            rates.tokens = stricter(rates.tokens, {
              limit: limits.tpm,
              remaining: Math.max(0, Math.floor(limits.tpm - level)),
              resetMs: Math.ceil(level / rate),
            });
            return refuse('tpm', (level + request.tokens - limits.tpm) / rate);
          }
          const after = level + request.tokens;
          rates.tokens = stricter(rates.tokens, {
            limit: limits.tpm,
            remaining: Math.max(0, Math.floor(limits.tpm - after)),
            resetMs: Math.ceil(after / rate),
          });
        }
        if (limits.maxParallel !== undefined && state.parallel.size >= limits.maxParallel) {
          let first = Number.POSITIVE_INFINITY;
          for (const expires of state.parallel.values()) {
            first = Math.min(first, expires);
          }
          return refuse('parallel', Math.min(1000, first - now));
        }
        if (limits.mediaUnitsPerDay !== undefined && request.mediaUnits > 0) {
          const used = settledAt(state, `media:${dayOf(now)}`) + state.reservedMedia;
          if (used + request.mediaUnits > limits.mediaUnitsPerDay) {
            return refuse('media', dayEndsIn(now));
          }
        }
        if (limits.budgetUsd !== undefined && request.spends !== false) {
          const spent = settledAt(state, `spend:${periodOf(limits, now)}`) + state.reservedCost;
          if (spent >= limits.budgetUsd) {
            return refuse('budget', periodEndsIn(limits, now));
          }
        }
      }
      for (const { scope, state, level } of checked) {
        const { limits } = scope;
        if (limits.rpm !== undefined) {
          state.requests.push(now);
        }
        if (limits.tpm !== undefined) {
          state.bucket = { level: level + request.tokens, at: now };
        }
        if (limits.maxParallel !== undefined) {
          state.parallel.set(request.lease, now + request.leaseMs);
        }
        const reads = limits.budgetUsd !== undefined || limits.mediaUnitsPerDay !== undefined;
        if ((request.costUsd > 0 || request.mediaUnits > 0) && reads) {
          state.reservations.set(request.lease, {
            costUsd: request.costUsd,
            mediaUnits: request.mediaUnits,
            expires: now + request.leaseMs,
          });
          state.reservedCost += request.costUsd;
          state.reservedMedia += request.mediaUnits;
        }
      }
      return { admitted: true, rates };
    },

    async settle(request: Settle): Promise<void> {
      const { now } = request;
      for (const { scope, limits } of request.scopes) {
        const state = stateOf(scope);
        sweep(state, now, limits.tpm);
        state.parallel.delete(request.lease);
        release(state, request.lease);
        if (limits.tpm !== undefined) {
          state.bucket.level = Math.max(0, state.bucket.level + request.tokensDelta);
        }
        // A scope counts media units only while it limits them, and spend only while it has a budget.
        if (limits.mediaUnitsPerDay !== undefined) {
          addSettled(state, `media:${dayOf(now)}`, request.mediaUnits);
        }
        if (limits.budgetUsd !== undefined) {
          addSettled(state, `spend:${periodOf(limits, now)}`, request.costUsd);
        }
      }
    },

    async renewLeases(leases, now, leaseMs) {
      for (const [scope, list] of leases) {
        const state = scopes.get(scope);
        if (!state) {
          continue;
        }
        for (const lease of list) {
          // A lease that expired (at or before now) is released, as a sweep would, never revived.
          const expires = state.parallel.get(lease);
          if (expires !== undefined) {
            if (expires <= now) {
              state.parallel.delete(lease);
            } else {
              state.parallel.set(lease, now + leaseMs);
            }
          }
          const reservation = state.reservations.get(lease);
          if (reservation) {
            if (reservation.expires <= now) {
              release(state, lease);
            } else {
              reservation.expires = now + leaseMs;
            }
          }
        }
      }
    },

    async spent(scope, now) {
      return settledAt(stateOf(scope.scope), `spend:${periodOf(scope.limits, now)}`);
    },

    async close() {
      scopes.clear();
    },
  };
}
