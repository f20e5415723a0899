/**
 * Reads a perf-kit run of the budget candidates (bench/perf-kit-budgets.ts; the run's `--out` folder: raw.json,
 * summary.json) and prints each budget: the variant's CPU µs/request at 1,000 req/s (the kit's phase c; max req/s and
 * added p99 for issue 36) against its controls, as a percent, pass or fail. Run by bench/budgets.sh; alone: `npx tsx bench/budgets-report.ts RESULTS_DIR`.
 *
 * The verdict is on the median of the per-run ratios: the variant ÷ the mean of the two controls it ran between in the
 * same round (bench/perf-kit-budgets.ts); the medians of each candidate across runs are shown beside it. Neighbouring
 * controls run the same hot path, so their differences are the run's noise band: a budget whose margin is inside it
 * is not decided by that run.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { BUDGETS, type Budget, CONTROL_PAIRS } from './perf-kit-budgets.js';

interface RunResult {
  system: string;
  run: number;
  error?: string;
  cpuUsPerReqAt1k?: number;
  psiStart?: number | null;
  psiEnd?: number | null;
  loadStart?: string;
  open?: { sent?: number; achievedRate?: number; latency?: { p99?: number }; errors?: number; error?: string };
  max?: { rps?: number };
}

/** The kit's phase c asks for 1,000 req/s; a run that reached less measured a saturated gateway. */
const MIN_RATE = 950;

const median = (values: number[]): number | undefined => {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return undefined;
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const pct = (ratio: number | undefined): string =>
  ratio === undefined ? 'n/a' : `${ratio >= 1 ? '+' : ''}${((ratio - 1) * 100).toFixed(1)} %`;
const num = (value: number | undefined, digits = 0): string => (value === undefined ? 'n/a' : value.toFixed(digits));

function main(): void {
  const dir = process.argv[2];
  if (!dir || dir === '--help' || !existsSync(path.join(dir, 'raw.json'))) {
    console.error('usage: npx tsx bench/budgets-report.ts RESULTS_DIR   (a perf-kit --out folder with raw.json)');
    process.exit(dir === '--help' ? 0 : 2);
  }
  const raw = JSON.parse(readFileSync(path.join(dir, 'raw.json'), 'utf8')) as {
    machine: { loadavg?: string; loadavgEnd?: string };
    results: RunResult[];
  };
  // The load average at the end is only in summary.json (written once every run is done).
  const summaryFile = path.join(dir, 'summary.json');
  if (existsSync(summaryFile)) {
    raw.machine.loadavgEnd = (JSON.parse(readFileSync(summaryFile, 'utf8')) as typeof raw).machine.loadavgEnd;
  }
  const ok = raw.results.filter((r) => !r.error);
  const runs = [...new Set(raw.results.map((r) => r.run))].sort((a, b) => a - b);
  const at = (system: string, run: number) => ok.find((r) => r.system === system && r.run === run);
  const metric = (r: RunResult | undefined, m: Budget['metric']): number | undefined => {
    if (!r) return undefined;
    // A 1,000 req/s phase that did not finish (the driver's "hard stop" on a gateway far below the rate) has no
    // request count: the kit then divides its CPU by 1, which is no figure at all.
    const openFailed = Boolean(r.open?.error) || !r.open?.sent;
    if (m === 'cpu') return openFailed ? undefined : r.cpuUsPerReqAt1k;
    if (m === 'maxRps') return r.max?.rps;
    const direct = at('direct', r.run);
    const p99 = openFailed ? undefined : r.open?.latency?.p99;
    const directP99 = direct?.open?.latency?.p99;
    return p99 !== undefined && directP99 !== undefined ? p99 - directP99 : undefined;
  };
  /** A figure of several candidates in one run: their mean, when every one of them has it. */
  const meanOf = (systems: readonly string[], run: number, m: Budget['metric']): number | undefined => {
    const values = systems.map((system) => metric(at(system, run), m));
    if (values.some((v) => v === undefined || v <= 0)) return undefined;
    return (values as number[]).reduce((sum, v) => sum + v, 0) / values.length;
  };
  /** Per-run ratios of a candidate to the mean of others in the same round, oriented so that > 1 is worse. */
  const ratios = (variant: string, against: readonly string[], m: Budget['metric']): number[] =>
    runs
      .map((run) => {
        const a = meanOf([variant], run, m);
        const b = meanOf(against, run, m);
        if (a === undefined || b === undefined) return undefined;
        return m === 'maxRps' ? b / a : a / b;
      })
      .filter((v): v is number => v !== undefined);
  const medianOf = (system: string, m: Budget['metric']) =>
    median(runs.map((run) => metric(at(system, run), m)).filter((v): v is number => v !== undefined));

  console.log(`\nBudgets (perf kit phase c unless said; ${runs.length} run(s); results in ${dir})`);
  console.log(
    `load average at start ${raw.machine.loadavg ?? '?'}, at end ${raw.machine.loadavgEnd ?? '?'}: figures from a loaded machine are a smoke test, not a verdict.\n`,
  );
  for (const failed of raw.results.filter((r) => r.error)) {
    console.log(`!! ${failed.system} run ${failed.run + 1} failed: ${failed.error}`);
  }
  for (const r of ok.filter((r) => r.open?.error || !r.open?.sent)) {
    console.log(
      `!! ${r.system} run ${r.run + 1}: the 1,000 req/s phase did not finish (${r.open?.error ?? 'no count'}): no CPU figure`,
    );
  }
  console.log('CPU µs/request @1k and achieved rate per candidate (median of runs; per run):');
  const systems = [...new Set(raw.results.map((r) => r.system))];
  for (const system of systems) {
    const perRun = runs.map((run) => at(system, run));
    console.log(
      `  ${system.padEnd(26)} ${num(medianOf(system, 'cpu')).padStart(5)} µs   [${perRun.map((r) => num(metric(r, 'cpu'))).join(', ')}]` +
        `   achieved ${perRun.map((r) => num(r?.open?.achievedRate)).join(', ')} req/s` +
        `   cpu psi ${perRun.map((r) => (r ? `${r.psiStart ?? '?'}→${r.psiEnd ?? '?'}` : 'n/a')).join(', ')} %`,
    );
  }
  // Neighbouring controls run the same hot path: how far apart they read is what this run can resolve.
  const noiseOf = (m: Budget['metric']) =>
    CONTROL_PAIRS.flatMap(([first, second]) => ratios(second, [first], m)).map((r) => Math.abs(r - 1));
  const noise = noiseOf('cpu');
  console.log(
    `\nnoise band (CPU, two neighbouring controls with the same hot path, ${noise.length} pairs): ` +
      `median ${(100 * (median(noise) ?? Number.NaN)).toFixed(1)} %, largest ${(100 * Math.max(...noise)).toFixed(1)} %\n`,
  );
  console.log('| issue | budget | variant | controls (mean) | median ratio (per run) | limit | verdict |');
  console.log('|---|---|---|---|---|---|---|');
  let failed = 0;
  let undecided = 0;
  for (const budget of BUDGETS) {
    // A run of some variants only (BUDGETS_ONLY) reports theirs.
    if (!systems.includes(budget.variant)) continue;
    const perRun = ratios(budget.variant, budget.controls, budget.metric);
    const ratio = median(perRun);
    const unit = budget.metric === 'cpu' ? ' µs' : budget.metric === 'maxRps' ? ' req/s' : ' ms';
    const digits = budget.metric === 'addedP99' ? 2 : 0;
    let verdict = ratio === undefined ? 'n/a' : ratio <= 1 + budget.limitPct / 100 ? 'pass' : 'FAIL';
    // A ratio nearer the limit than two identical gateways read apart (median) is not decided by this run.
    const band = median(noiseOf(budget.metric));
    if (ratio !== undefined && band !== undefined && Math.abs(ratio - 1 - budget.limitPct / 100) < band) {
      verdict += ` (within the noise band of ${(100 * band).toFixed(1)} %: undecided)`;
      undecided += 1;
    }
    // Below ~1,000 req/s the phase measured a saturated gateway, not the budget's operating point.
    const slow = runs.some((run) =>
      [budget.variant, ...budget.controls].some((system) => (at(system, run)?.open?.achievedRate ?? 0) < MIN_RATE),
    );
    if (verdict.includes('undecided')) {
      // counted above
    } else if (verdict !== 'n/a' && slow) {
      verdict += ' (rate not reached: undecided)';
      undecided += 1;
    } else if (verdict === 'FAIL') {
      failed += 1;
    } else if (verdict === 'n/a') {
      undecided += 1;
    }
    console.log(
      `| ${budget.issue} | ${budget.what} | ${budget.variant} ${num(medianOf(budget.variant, budget.metric), digits)}${unit} | ` +
        `${budget.controls.map((c) => `${c} ${num(medianOf(c, budget.metric), digits)}`).join(' / ')}${unit} | ${pct(ratio)} (${perRun.map((r) => pct(r)).join(', ')}) | ` +
        `≤ +${budget.limitPct} % | ${verdict} |`,
    );
  }
  const plain = ok.filter((r) => r.system === 'omnigate');
  console.log(
    `\nissues 29/33 (the perf kit's figures unchanged): omnigate CPU ${num(medianOf('omnigate', 'cpu'))} µs/req @1k, ` +
      `max ${num(median(plain.map((r) => r.max?.rps ?? Number.NaN)))} req/s, added p99 @1k ${num(medianOf('omnigate', 'addedP99'), 2)} ms` +
      ' — compare with the same figures from a run of the base commit (summary.md has the full table).',
  );
  const sink = path.join(dir, 'work', 'omnigate-tracing', 'otlp-sink.log');
  if (existsSync(sink)) {
    const counts = readFileSync(sink, 'utf8').match(/^otlp sink: .*$/gm) ?? [];
    console.log(`tracing collector: ${counts.length ? counts.join('; ') : 'no count yet (still running?)'}`);
  }
  console.log(`\n${failed} budget(s) over their limit, ${undecided} not decided by this run.`);
}

main();
