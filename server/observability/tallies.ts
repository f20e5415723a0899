/**
 * The per-call series (requests, tokens, request latency, time to first byte) kept as plain numbers on the request
 * path and handed to prom-client's registry when it is scraped: a counter through its `collect`, a histogram as a
 * metric of its own (`get`, the shape prom-client's Histogram gives, so the text and the cluster's aggregation are
 * prom-client's).
 *
 * Why not prom-client's `inc` and `observe` on each call: each hashes the labels into a string and checks them,
 * and `observe` finds its bucket by the bound as an object key (a number turned into a string per observation).
 * In a profile at 1k req/s that was ~2 % of the gateway's CPU for what is an addition here (bench/README.md,
 * issue 32).
 */
import { Counter, type Registry } from 'prom-client';

/** One label set of a tallied counter. */
export interface CounterTally {
  value: number;
}

interface LabelledTally<T> {
  labels: Record<string, string>;
  tally: T;
}

/** A counter whose label sets are found once (`series`) and then counted by adding to `value`. */
export function talliedCounter(register: Registry, name: string, help: string, labelNames: readonly string[]) {
  const series = new Map<string, LabelledTally<CounterTally>>();
  new Counter({
    name,
    help,
    labelNames,
    registers: [register],
    collect() {
      this.reset();
      for (const { labels, tally } of series.values()) {
        // A label set nothing was added to is not shown (as with prom-client's own children).
        if (tally.value !== 0) {
          this.inc(labels, tally.value);
        }
      }
    },
  });
  return {
    /** `id` names the label set (the caller's cache key); `labels` are read only the first time. */
    series(id: string, labels: () => Record<string, string>): CounterTally {
      let found = series.get(id);
      if (!found) {
        found = { labels: labels(), tally: { value: 0 } };
        series.set(id, found);
      }
      return found.tally;
    },
  };
}

/** One label set of a tallied histogram. */
export class HistogramTally {
  /** Observations per bucket, not cumulative; the last is the +Inf bucket. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    let index = 0;
    while (index < this.bounds.length && value > this.bounds[index]!) {
      index++;
    }
    this.counts[index]!++;
    this.sum += value;
    this.count++;
  }
}

/** A histogram by one label, registered as a metric of its own. */
export function talliedHistogram(
  register: Registry,
  name: string,
  help: string,
  labelName: string,
  bounds: readonly number[],
) {
  const series = new Map<string, HistogramTally>();
  const metric = {
    name,
    help,
    type: 'histogram',
    aggregator: 'sum',
    async get() {
      const values: Array<{ value: number; labels: Record<string, string | number>; metricName: string }> = [];
      for (const [labelValue, tally] of series) {
        let cumulative = 0;
        tally.counts.forEach((count, index) => {
          cumulative += count;
          values.push({
            value: cumulative,
            labels: { le: index < bounds.length ? bounds[index]! : '+Inf', [labelName]: labelValue },
            metricName: `${name}_bucket`,
          });
        });
        values.push({ value: tally.sum, labels: { [labelName]: labelValue }, metricName: `${name}_sum` });
        values.push({ value: tally.count, labels: { [labelName]: labelValue }, metricName: `${name}_count` });
      }
      return { name, help, type: 'histogram', values, aggregator: 'sum' };
    },
    reset() {
      series.clear();
    },
  };
  register.registerMetric(metric as unknown as Parameters<Registry['registerMetric']>[0]);
  return {
    series(labelValue: string): HistogramTally {
      let found = series.get(labelValue);
      if (!found) {
        found = new HistogramTally(bounds);
        series.set(labelValue, found);
      }
      return found;
    },
  };
}
