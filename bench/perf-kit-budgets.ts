/**
 * The budget variants of Omnigate as perf-kit candidates (issues 29-32, 36; bench/README.md, "Budgets with the perf
 * kit"), and the layout the report reads them by. `npx tsx bench/perf-kit-budgets.ts FILE` writes the candidates
 * file the kit runs (bench/budgets.sh does it); bench/budgets-report.ts imports the same layout.
 *
 * Why the layout repeats its controls: the kit runs its systems one after another, about half a minute each, and on
 * this machine two gateways with the same hot path read up to 28 % apart a few minutes apart (2026-11-28). So every
 * variant runs between two controls in the same round, and is compared with their mean; the controls' differences
 * with one another are the run's noise band.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The checkout the candidates start from (`node dist/main.js` there); absolute, so the file can live anywhere. */
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const PLAIN_YAML = [
  'providers:',
  '  fake:',
  '    type: openai-compatible',
  '    base_url: ${UPSTREAM_URL}',
  '    api_key: sk-upstream',
  '    max_connections: 1024',
  'models:',
  '  - provider: fake',
  '    model: gpt-4o-mini',
  '    id: gpt-4o-mini',
  '',
].join('\n');

const LIMITS_YAML = `${PLAIN_YAML}limits:\n  rpm: 100000000\n  tpm: 1000000000000\n  max_parallel: 100000\n`;

const TWO_DEPLOYMENTS_YAML = [
  'providers:',
  ...['fake-east', 'fake-west'].flatMap((name) => [
    `  ${name}:`,
    '    type: openai-compatible',
    '    base_url: ${UPSTREAM_URL}',
    '    api_key: sk-upstream',
    '    max_connections: 1024',
  ]),
  'models:',
  '  - id: gpt-4o-mini',
  '    type: chat',
  '    deployments:',
  '      - { provider: fake-east, model: gpt-4o-mini, weight: 1, id: east }',
  '      - { provider: fake-west, model: gpt-4o-mini, weight: 1, id: west }',
  '',
].join('\n');

/** Set on the metrics variants and their controls: with an admin key, metrics are on unless OMNIGATE_METRICS=false. */
const ADMIN_KEY = 'sk-perf-kit-admin-7d1c2b9e4f6a8035c1e2d3f4';

interface Variant {
  label: string;
  /** bench/perf-kit-start.sh's argument (its setup, then `exec node dist/main.js`), or plain `node dist/main.js`. */
  setup?: 'pg-redis' | 'redis' | 'tracing';
  yaml?: string;
  env?: Record<string, string>;
}

/** The two kinds of control: plain `omnigate` (no admin key, so metrics off) and metrics off with an admin key. */
const PLAIN: Variant = { label: 'Omnigate (SQLite, limits off, one provider, metrics off)' };
const METRICS_OFF: Variant = {
  label: 'Omnigate, admin key set, OMNIGATE_METRICS=false (same hot path as plain)',
  env: { OMNIGATE_ADMIN_KEY: ADMIN_KEY, OMNIGATE_METRICS: 'false' },
};

export interface Budget {
  issue: string;
  what: string;
  variant: string;
  /** The two controls the variant runs between, in every round. */
  controls: [string, string];
  /** Largest allowed increase, in percent (CPU and p99: higher is worse; max req/s: lower is worse). */
  limitPct: number;
  metric: 'cpu' | 'maxRps' | 'addedP99';
}

/** Slot order of one round: each variant between two controls of its comparison kind. */
export const LAYOUT: [string, Variant][] = [
  ['omnigate', PLAIN],
  ['omnigate-pg-redis', { label: 'Omnigate on PostgreSQL + Redis', setup: 'pg-redis' }],
  ['omnigate-control-2', PLAIN],
  ['omnigate-limits-redis', { label: 'Omnigate, limited key, counters in Redis', setup: 'redis', yaml: LIMITS_YAML }],
  ['omnigate-control-3', PLAIN],
  ['omnigate-two-deployments', { label: 'Omnigate, the model on two deployments', yaml: TWO_DEPLOYMENTS_YAML }],
  ['omnigate-control-4', PLAIN],
  ['omnigate-metrics-off', METRICS_OFF],
  ['omnigate-metrics-on', { label: 'Omnigate, metrics on, tracing off', env: { OMNIGATE_ADMIN_KEY: ADMIN_KEY } }],
  ['omnigate-metrics-off-2', METRICS_OFF],
  [
    'omnigate-tracing',
    {
      label: 'Omnigate, metrics on, traces to a loopback collector',
      setup: 'tracing',
      env: { OMNIGATE_ADMIN_KEY: ADMIN_KEY },
    },
  ],
  ['omnigate-metrics-off-3', METRICS_OFF],
];

/** Pairs of neighbouring controls with the same hot path: how far apart two identical gateways read in a round. */
export const CONTROL_PAIRS: [string, string][] = [
  ['omnigate', 'omnigate-control-2'],
  ['omnigate-control-2', 'omnigate-control-3'],
  ['omnigate-control-3', 'omnigate-control-4'],
  ['omnigate-control-4', 'omnigate-metrics-off'],
  ['omnigate-metrics-off', 'omnigate-metrics-off-2'],
  ['omnigate-metrics-off-2', 'omnigate-metrics-off-3'],
];

const between = (variant: string): [string, string] => {
  const names = LAYOUT.map(([name]) => name);
  const at = names.indexOf(variant);
  const before = names[at - 1];
  const after = names[at + 1];
  if (at < 0 || !before || !after) throw new Error(`${variant} is not between two controls`);
  return [before, after];
};

const budget = (issue: string, what: string, variant: string, limitPct: number, metric: Budget['metric']): Budget => ({
  issue,
  what,
  variant,
  controls: between(variant),
  limitPct,
  metric,
});

export const BUDGETS: Budget[] = [
  budget('36', 'PostgreSQL + Redis vs SQLite', 'omnigate-pg-redis', 10, 'cpu'),
  budget('36', 'PostgreSQL + Redis vs SQLite, max req/s (lower is worse)', 'omnigate-pg-redis', 10, 'maxRps'),
  budget('36', 'PostgreSQL + Redis vs SQLite, added p99 @1k', 'omnigate-pg-redis', 10, 'addedP99'),
  budget('30', 'limited key, Redis counters vs limits off', 'omnigate-limits-redis', 15, 'cpu'),
  budget('31', 'two deployments vs one provider', 'omnigate-two-deployments', 5, 'cpu'),
  budget('32', 'metrics on (tracing off) vs metrics off', 'omnigate-metrics-on', 5, 'cpu'),
  budget('32', 'metrics on + traces to a loopback collector vs metrics off', 'omnigate-tracing', 20, 'cpu'),
];

function candidate(name: string, variant: Variant): object {
  return {
    name,
    label: variant.label,
    cwd: REPO,
    start: variant.setup ? `bash bench/perf-kit-start.sh ${variant.setup}` : 'node dist/main.js',
    env: {
      PORT: '${PORT}',
      HOST: '127.0.0.1',
      NODE_ENV: 'production',
      OMNIGATE_DATA_DIR: '${WORK_DIR}/data',
      OMNIGATE_API_KEYS: 'sk-perf-kit',
      OMNIGATE_CONFIG: '${WORK_DIR}/omnigate.yaml',
      PERF_KIT_WORK_DIR: '${WORK_DIR}',
      ...variant.env,
    },
    files: { 'omnigate.yaml': variant.yaml ?? PLAIN_YAML },
    health: 'http://127.0.0.1:${PORT}/health',
    startTimeoutMs: 60000,
    chatPath: '/v1/chat/completions',
    headers: { authorization: 'Bearer sk-perf-kit' },
    body: { $ref: 'body' },
  };
}

/** The kit's reference, repeated because bench/budgets.sh runs the kit with --no-baselines. */
const DIRECT = {
  name: 'direct',
  label: 'direct to the fake upstream',
  reference: true,
  cwd: '${KIT_DIR}',
  start: 'node upstream/fake-upstream.mjs',
  env: { STREAM_CHUNKS: '20', STREAM_INTERVAL_MS: '50' },
  health: 'http://127.0.0.1:${PORT}/health',
  chatPath: '/v1/chat/completions',
  headers: { authorization: 'Bearer sk-perf-kit' },
  body: { $ref: 'body' },
};

if (import.meta.url === `file://${process.argv[1]}`) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: npx tsx bench/perf-kit-budgets.ts CANDIDATES_FILE');
    process.exit(2);
  }
  // BUDGETS_ONLY=variant,variant runs those variants with their two controls only (a rerun of the contested ones).
  const only = process.env.BUDGETS_ONLY?.split(',').filter(Boolean);
  const unknown = only?.filter((name) => !BUDGETS.some((b) => b.variant === name));
  if (unknown?.length) {
    console.error(`BUDGETS_ONLY names no budget variant: ${unknown.join(', ')}`);
    process.exit(2);
  }
  const kept = only ? new Set(only.flatMap((name) => [name, ...between(name)])) : undefined;
  const layout = kept ? LAYOUT.filter(([name]) => kept.has(name)) : LAYOUT;
  const candidates = [DIRECT, ...layout.map(([name, variant]) => candidate(name, variant))];
  writeFileSync(file, `${JSON.stringify({ candidates }, null, 2)}\n`);
}
