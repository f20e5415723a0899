import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { talliedCounter, talliedHistogram } from './tallies.js';

const BOUNDS = [0.001, 0.01, 0.1, 1];
const SAMPLES = [0.0005, 0.001, 0.0011, 0.05, 0.1, 3, 70];

describe('tallies', () => {
  it('render a histogram exactly as prom-client’s own Histogram does for the same observations', async () => {
    const ours = new Registry();
    const tally = talliedHistogram(ours, 'x_seconds', 'help', 'operation', BOUNDS);
    const theirs = new Registry();
    const reference = new Histogram({
      name: 'x_seconds',
      help: 'help',
      labelNames: ['operation'],
      buckets: BOUNDS,
      registers: [theirs],
    });
    for (const [index, value] of SAMPLES.entries()) {
      const operation = index % 2 === 0 ? 'even' : 'odd';
      tally.series(operation).observe(value);
      reference.observe({ operation }, value);
    }
    const text = await ours.metrics();
    expect(text).toBe(await theirs.metrics());
    // Spot checks that do not rely on prom-client: the +Inf bucket holds everything, 0.001 is in le="0.001".
    expect(text).toContain('x_seconds_bucket{le="0.001",operation="even"} 1');
    expect(text).toContain('x_seconds_bucket{le="+Inf",operation="even"} 4');
    expect(text).toContain('x_seconds_count{operation="odd"} 3');
    ours.resetMetrics();
    expect(await ours.metrics()).not.toContain('x_seconds_count');
  });

  it('count a counter’s label sets by addition and read them when scraped', async () => {
    const register = new Registry();
    const counter = talliedCounter(register, 'y_total', 'help', ['model', 'type']);
    const input = counter.series('a/input', () => ({ model: 'a', type: 'input' }));
    input.value += 12;
    counter.series('a/input', () => {
      throw new Error('labels are read once');
    }).value += 3;
    counter.series('b/output', () => ({ model: 'b', type: 'output' })).value++;
    counter.series('c/input', () => ({ model: 'c', type: 'input' }));
    const text = await register.metrics();
    // A label set nothing was added to is not shown, as with prom-client's own children.
    expect(text).not.toContain('model="c"');
    expect(text).toContain('y_total{model="a",type="input"} 15');
    expect(text).toContain('y_total{model="b",type="output"} 1');
    // A second scrape reads the same totals (the counter is rebuilt, not added to).
    expect(await register.metrics()).toBe(text);
  });
});
