/** A uPlot time-series chart (x: day start, unix seconds) that follows its container's width. */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface Series {
  label: string;
  values: number[];
  color: string;
}

export function DayChart(props: { title: string; days: number[]; series: Series[]; testId: string }) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = host.current;
    if (!element) {
      return;
    }
    const plot = new uPlot(
      {
        width: Math.max(280, element.clientWidth),
        height: 220,
        scales: { x: { time: true } },
        axes: [
          { stroke: 'currentColor', grid: { stroke: 'rgba(128,128,128,0.2)' } },
          { stroke: 'currentColor', grid: { stroke: 'rgba(128,128,128,0.2)' } },
        ],
        series: [
          {},
          ...props.series.map((series) => ({
            label: series.label,
            stroke: series.color,
            fill: `${series.color}33`,
            width: 2,
            points: { show: true, size: 6 },
          })),
        ],
      },
      [props.days, ...props.series.map((series) => series.values)],
      element,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(280, element.clientWidth), height: 220 }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [props.days, props.series]);
  const total = props.series.map(
    (series) => `${series.label}: ${series.values.reduce((sum, value) => sum + value, 0)}`,
  );
  return (
    <figure class="chart" data-testid={props.testId}>
      <figcaption>{props.title}</figcaption>
      <div ref={host} role="img" aria-label={`${props.title}, totals over the range — ${total.join(', ')}`} />
    </figure>
  );
}

/** Categories (models, keys) as horizontal bars: plain HTML, readable by a screen reader as a list. */
export function BarList(props: { title: string; rows: Array<{ label: string; value: number; detail?: string }> }) {
  const max = Math.max(1, ...props.rows.map((row) => row.value));
  return (
    <figure class="bars">
      <figcaption>{props.title}</figcaption>
      <ul>
        {props.rows.map((row) => (
          <li key={row.label}>
            <span class="bar-label">{row.label}</span>
            <span class="bar" style={{ width: `${(row.value / max) * 100}%` }} aria-hidden="true" />
            <span class="bar-value">{row.detail ?? row.value}</span>
          </li>
        ))}
      </ul>
    </figure>
  );
}
