/**
 * One circuit per deployment (its id, shared by every model that lists it): `failure_threshold` failures in a
 * row open it; while open it gets no calls; after `cooldown_ms` exactly one call goes through as a probe (the
 * others still skip it) — success closes the circuit, failure opens it for another cooldown. Kept in this
 * process (`createMemoryBreakers`) or, with `OMNIGATE_REDIS_URL`, in Redis for all instances (redis-breakers.ts).
 */

export type CircuitState = 'closed' | 'open' | 'half-open';

/** What `acquire` grants: whether to call, whether this call is the probe, and the failures counted so far. */
export interface Permit {
  allowed: boolean;
  probe: boolean;
  failures: number;
}

export interface BreakerSettings {
  failureThreshold: number;
  cooldownMs: number;
}

/**
 * The per-call methods answer at once when the state is in this process (no promise, so the retry layer's healthy
 * path awaits nothing of theirs) and with a promise when it is in Redis; callers await only a promise.
 */
export interface CircuitBreakers {
  acquire(id: string): Permit | Promise<Permit>;
  /** The deployment answered: its circuit closes (a no-op when it was closed with no failures). */
  success(id: string, permit: Permit): void | Promise<void>;
  /** The deployment failed; the circuit's state afterwards. */
  failure(id: string, permit: Permit): CircuitState | Promise<CircuitState>;
  /** The call ended saying nothing about the deployment (the caller left): a probe's turn goes to the next call. */
  release(id: string, permit: Permit): void | Promise<void>;
  state(id: string): Promise<{ state: CircuitState; failures: number }>;
  close(): Promise<void>;
}

export const ALLOWED: Permit = Object.freeze({ allowed: true, probe: false, failures: 0 });
export const DENIED: Permit = Object.freeze({ allowed: false, probe: false, failures: 0 });

interface Circuit {
  failures: number;
  /** 0 while closed; when open, the time its cooldown ends. */
  openUntil: number;
  probing: boolean;
}

export function createMemoryBreakers(settings: BreakerSettings, now: () => number = Date.now): CircuitBreakers {
  const circuits = new Map<string, Circuit>();
  return {
    acquire(id) {
      const circuit = circuits.get(id);
      if (!circuit) {
        return ALLOWED;
      }
      if (circuit.openUntil === 0) {
        return { allowed: true, probe: false, failures: circuit.failures };
      }
      if (circuit.openUntil > now() || circuit.probing) {
        return DENIED;
      }
      circuit.probing = true;
      return { allowed: true, probe: true, failures: circuit.failures };
    },
    success(id, permit) {
      if (permit.probe || permit.failures > 0 || circuits.has(id)) {
        circuits.delete(id);
      }
    },
    failure(id, permit) {
      let circuit = circuits.get(id);
      if (!circuit) {
        circuit = { failures: 0, openUntil: 0, probing: false };
        circuits.set(id, circuit);
      }
      circuit.failures += 1;
      const at = now();
      if (permit.probe || (circuit.failures >= settings.failureThreshold && circuit.openUntil <= at)) {
        circuit.openUntil = at + settings.cooldownMs;
        circuit.probing = false;
      }
      return circuit.openUntil > at ? 'open' : circuit.openUntil === 0 ? 'closed' : 'half-open';
    },
    release(id, permit) {
      const circuit = circuits.get(id);
      if (permit.probe && circuit) {
        circuit.probing = false;
      }
    },
    async state(id) {
      const circuit = circuits.get(id);
      if (!circuit) {
        return { state: 'closed', failures: 0 };
      }
      const state = circuit.openUntil === 0 ? 'closed' : circuit.openUntil > now() ? 'open' : 'half-open';
      return { state, failures: circuit.failures };
    },
    async close() {
      circuits.clear();
    },
  };
}
