/**
 * The Grafana dashboard (deploy/grafana/omnigate.json) is built on metrics that exist: every metric name in its
 * queries is one the metrics registry declares (a renamed metric would leave a panel silently empty).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../server/observability/metrics.js';
import { parsePrometheusText } from '../helpers/prometheus-text.js';
import { ROOT } from '../helpers/spawn-server.js';

describe('deploy/grafana/omnigate.json', () => {
  it('queries only metrics that /metrics declares', async () => {
    const dashboard = JSON.parse(readFileSync(path.join(ROOT, 'deploy/grafana/omnigate.json'), 'utf8')) as {
      panels: Array<{ targets: Array<{ expr: string }> }>;
    };
    const used = new Set(
      dashboard.panels.flatMap((panel) =>
        panel.targets.flatMap((target) =>
          [...target.expr.matchAll(/\b((?:omnigate|nodejs|process)_[a-z0-9_]+)/g)].map((match) => match[1]),
        ),
      ),
    );
    const metrics = createMetrics({ models: [], providers: [], perKey: false, sources: {} });
    const declared = [...parsePrometheusText(await metrics.render()).types.keys()];
    const missing = [...used].filter((name) => !declared.includes(name.replace(/_(bucket|count|sum)$/, '')));
    expect(used.size).toBeGreaterThan(15);
    expect(missing).toEqual([]);
  });
});
