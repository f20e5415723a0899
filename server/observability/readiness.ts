/**
 * `GET /health/ready`: runs each dependency check (the database, the default chat model's upstream, …) and
 * says which fail. Checks run at most once per `reuseMs` (probes are frequent and need no key, so a flood of
 * them costs one round of checks), and concurrent probes share the round in flight.
 */

/** One dependency: null when reachable, else why not (a short sentence, no secrets). */
export interface ReadinessCheck {
  name: string;
  run(): Promise<string | null> | string | null;
}

export interface CheckResult {
  name: string;
  status: 'ok' | 'failing';
  detail: string | null;
}

export interface Readiness {
  check(): Promise<CheckResult[]>;
}

export function createReadiness(checks: readonly ReadinessCheck[], options: { reuseMs?: number } = {}): Readiness {
  const reuseMs = options.reuseMs ?? 2_000;
  let last: { at: number; results: Promise<CheckResult[]> } | undefined;

  async function runOne(check: ReadinessCheck): Promise<CheckResult> {
    let detail: string | null;
    try {
      detail = await check.run();
    } catch (error) {
      detail = (error as Error)?.message ?? String(error);
    }
    return { name: check.name, status: detail === null ? 'ok' : 'failing', detail };
  }

  return {
    check() {
      const now = performance.now();
      if (!last || now - last.at >= reuseMs) {
        last = { at: now, results: Promise.all(checks.map(runOne)) };
      }
      return last.results;
    },
  };
}
