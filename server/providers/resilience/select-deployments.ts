/**
 * The order in which one call tries a model's deployments. `weighted` draws without replacement by weight
 * (so the second try goes to another deployment); `least-busy` puts the fewest calls in flight first and
 * `lowest-latency` the lowest recent time to first answer (a smoothed average), ties in weighted order.
 * A deployment not measured yet counts as fastest, so it gets measured.
 */
/** How a call picks among a model's deployments (config `strategy`). */
export type Strategy = 'weighted' | 'least-busy' | 'lowest-latency';

export interface DeploymentStats {
  inFlight: number;
  /** Exponentially weighted mean ms to the first answer; 0 before the first. */
  latencyMs: number;
}

export interface Weighted {
  id: string;
  weight: number;
}

export function weightedOrder<T extends Weighted>(items: readonly T[], random: () => number = Math.random): T[] {
  if (items.length === 1) {
    return [items[0]!];
  }
  const left = [...items];
  const order: T[] = [];
  while (left.length > 0) {
    let total = 0;
    for (const item of left) {
      total += item.weight;
    }
    let point = random() * total;
    let index = 0;
    while (index < left.length - 1 && point >= left[index]!.weight) {
      point -= left[index]!.weight;
      index += 1;
    }
    order.push(left.splice(index, 1)[0]!);
  }
  return order;
}

export function orderDeployments<T extends Weighted>(
  items: readonly T[],
  strategy: Strategy,
  stats: (id: string) => DeploymentStats,
  random?: () => number,
): T[] {
  const order = weightedOrder(items, random);
  if (strategy === 'least-busy') {
    return order.sort((a, b) => stats(a.id).inFlight - stats(b.id).inFlight);
  }
  if (strategy === 'lowest-latency') {
    return order.sort((a, b) => stats(a.id).latencyMs - stats(b.id).latencyMs);
  }
  return order;
}

/** Smoothing of the latency mean: the last answer weighs a fifth. */
const ALPHA = 0.2;

export function createDeploymentStats(): {
  get(id: string): DeploymentStats;
  started(id: string): void;
  ended(id: string): void;
  answered(id: string, ms: number): void;
} {
  const byId = new Map<string, DeploymentStats>();
  const get = (id: string) => {
    let stats = byId.get(id);
    if (!stats) {
      stats = { inFlight: 0, latencyMs: 0 };
      byId.set(id, stats);
    }
    return stats;
  };
  return {
    get,
    started: (id) => {
      get(id).inFlight += 1;
    },
    ended: (id) => {
      const stats = get(id);
      stats.inFlight = Math.max(0, stats.inFlight - 1);
    },
    answered: (id, ms) => {
      const stats = get(id);
      stats.latencyMs = stats.latencyMs === 0 ? ms : stats.latencyMs * (1 - ALPHA) + ms * ALPHA;
    },
  };
}
