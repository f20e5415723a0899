/**
 * A Prometheus text-format (0.0.4) parser for tests: every sample line as name, labels and value, with
 * `# TYPE` lines kept, so a test can read a series exactly and check histograms are consistent.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  samples: Sample[];
  types: Map<string, string>;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?\s*/gy;

function parseValue(text: string): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text.toLowerCase() === 'nan') return NaN; // prom-client writes 'Nan'
  const value = Number(text);
  if (Number.isNaN(value)) throw new Error(`not a sample value: ${text}`);
  return value;
}

export function parsePrometheusText(text: string): Exposition {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const type = /^# TYPE (\S+) (\S+)$/.exec(line);
      if (type) types.set(type[1], type[2]);
      continue;
    }
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    const body = match[2] ?? '';
    LABEL.lastIndex = 0;
    let consumed = 0;
    for (let label = LABEL.exec(body); label; label = LABEL.exec(body)) {
      labels[label[1]] = label[2].replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
      consumed = LABEL.lastIndex;
    }
    if (consumed !== body.length) throw new Error(`bad labels: ${line}`);
    samples.push({ name: match[1], labels, value: parseValue(match[3]) });
  }
  return { samples, types };
}

/** The value of the one sample with exactly these labels (extra labels on the sample do not match). */
export function sampleValue(
  exposition: Exposition,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const wanted = Object.entries(labels);
  const found = exposition.samples.filter(
    (sample) =>
      sample.name === name &&
      Object.keys(sample.labels).length === wanted.length &&
      wanted.every(([key, value]) => sample.labels[key] === value),
  );
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} ${JSON.stringify(labels)}`);
  return found[0]?.value;
}

/**
 * Every series of histogram `name`: buckets never decrease as `le` grows, the `+Inf` bucket equals `_count`.
 * Returns the series' counts keyed by their labels (without `le`) as JSON.
 */
export function checkHistogram(exposition: Exposition, name: string): Map<string, number> {
  const series = new Map<string, Array<{ le: number; value: number }>>();
  for (const sample of exposition.samples.filter((s) => s.name === `${name}_bucket`)) {
    const { le, ...rest } = sample.labels;
    const id = JSON.stringify(rest);
    series.set(id, [...(series.get(id) ?? []), { le: parseValue(le), value: sample.value }]);
  }
  const counts = new Map<string, number>();
  for (const [id, buckets] of series) {
    buckets.sort((a, b) => a.le - b.le);
    buckets.forEach((bucket, index) => {
      if (index > 0 && bucket.value < buckets[index - 1].value)
        throw new Error(`${name} ${id}: bucket le=${bucket.le} below the one before`);
    });
    const labels = JSON.parse(id) as Record<string, string>;
    const count = sampleValue(exposition, `${name}_count`, labels);
    const inf = buckets.at(-1);
    if (inf?.le !== Infinity || inf.value !== count)
      throw new Error(`${name} ${id}: +Inf bucket ${inf?.value} is not _count ${count}`);
    if (sampleValue(exposition, `${name}_sum`, labels) === undefined) throw new Error(`${name} ${id}: no _sum`);
    counts.set(id, count);
  }
  return counts;
}
