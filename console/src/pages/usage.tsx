/**
 * Usage and spend of the signed-in key: requests, tokens and cost per day, per model and per key, latency
 * percentiles, the latest calls and a search by request id. Sums come from `GET /v1/usage/summary` when the
 * gateway has it; otherwise (404) they are added up here from the records of `GET /v1/usage`, which carry no
 * cost, so cost shows as unavailable.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiFailure, callJson, describe } from '../api.ts';
import { BarList, DayChart } from '../chart.tsx';
import { ErrorLine, Field, Page } from '../ui.tsx';

interface UsageRecord {
  request_id: string;
  key_id: string;
  operation: string;
  model: string | null;
  input_tokens: number;
  output_tokens: number;
  status: number;
  latency_ms: number;
  created_at: number;
}
interface Group {
  group: string;
  requests: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number | null;
}
interface Summary {
  byDay: Group[];
  byModel: Group[];
  byKey: Group[];
  source: 'summary' | 'records';
}

const DAY = 86_400;
const RANGE_DAYS = 30;
/** Pages of 100 records read for the fallback sums and the percentiles: the last 2,000 calls at most. */
const MAX_PAGES = 20;

async function readRecords(since: number): Promise<UsageRecord[]> {
  const records: UsageRecord[] = [];
  let after: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const query = new URLSearchParams({ limit: '100', since: String(since), order: 'desc' });
    if (after) {
      query.set('after', after);
    }
    const list = await callJson<{
      data: Array<UsageRecord & { id: string }>;
      has_more: boolean;
      last_id: string | null;
    }>(`/v1/usage?${query}`);
    records.push(...list.data);
    if (!list.has_more || !list.last_id) {
      break;
    }
    after = list.last_id;
  }
  return records;
}

function groupRecords(records: UsageRecord[], keyOf: (record: UsageRecord) => string): Group[] {
  const groups = new Map<string, Group>();
  for (const record of records) {
    const name = keyOf(record);
    const group = groups.get(name) ?? { group: name, requests: 0, input_tokens: 0, output_tokens: 0, cost_usd: null };
    group.requests += 1;
    group.input_tokens += record.input_tokens;
    group.output_tokens += record.output_tokens;
    groups.set(name, group);
  }
  return [...groups.values()].sort((a, b) => a.group.localeCompare(b.group));
}

const dayOf = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10);

async function readSummary(since: number, records: UsageRecord[]): Promise<Summary> {
  try {
    const summaryBy = (groupBy: string) =>
      callJson<{ data: Group[] }>(`/v1/usage/summary?group_by=${groupBy}&since=${since}`).then(
        (summary) => summary.data,
      );
    const [byDay, byModel, byKey] = await Promise.all([summaryBy('day'), summaryBy('model'), summaryBy('key')]);
    return { byDay, byModel, byKey, source: 'summary' };
  } catch (error) {
    if (!(error instanceof ApiFailure && error.status === 404)) {
      throw error;
    }
  }
  return {
    byDay: groupRecords(records, (record) => dayOf(record.created_at)),
    byModel: groupRecords(records, (record) => record.model ?? '(none)'),
    byKey: groupRecords(records, (record) => record.key_id),
    source: 'records',
  };
}

function percentile(sorted: number[], fraction: number): number {
  if (sorted.length === 0) {
    return 0;
  }
  // 0 < fraction ≤ 1 and sorted is not empty: the index is within it.
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)]!;
}

export function UsagePage() {
  const [records, setRecords] = useState<UsageRecord[] | null>(null);
  const [summary, setSummary] = useState<Summary | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [lookup, setLookup] = useState('');
  const [found, setFound] = useState<UsageRecord[] | null>(null);

  async function load() {
    setError(null);
    try {
      const since = Math.floor(Date.now() / 1000 / DAY) * DAY - (RANGE_DAYS - 1) * DAY;
      const list = await readRecords(since);
      setRecords(list);
      setSummary(await readSummary(since, list));
    } catch (failure) {
      setError(describe(failure));
    }
  }
  useEffect(() => {
    load();
  }, []);

  async function search(event: Event) {
    event.preventDefault();
    try {
      const list = await callJson<{ data: UsageRecord[] }>(`/v1/usage?request_id=${encodeURIComponent(lookup.trim())}`);
      setFound(list.data);
    } catch (failure) {
      setError(describe(failure));
    }
  }

  // Every day of the range, empty days as zero: one point alone gives the chart no time axis to speak of.
  const first = Math.floor(Date.now() / 1000 / DAY) * DAY - (RANGE_DAYS - 1) * DAY;
  const days = Array.from({ length: RANGE_DAYS }, (_, index) => first + index * DAY);
  const byDay = new Map((summary?.byDay ?? []).map((group) => [group.group, group]));
  const perDay = (value: (group: Group) => number) =>
    days.map((day) => {
      const group = byDay.get(dayOf(day));
      return group ? value(group) : 0;
    });
  const latencies = (records ?? []).map((record) => record.latency_ms).sort((a, b) => a - b);
  const costKnown = summary?.source === 'summary';
  return (
    <Page title="Usage and spend">
      <ErrorLine message={error} />
      <button type="button" onClick={load}>
        Refresh
      </button>
      {summary && summary.source === 'records' ? (
        <p class="note">
          Sums added up in the browser from <code>GET /v1/usage</code> (this gateway has no{' '}
          <code>/v1/usage/summary</code>); records carry no cost, so cost is not shown.
        </p>
      ) : null}
      {summary ? (
        <div class="charts">
          <DayChart
            title="Requests per day"
            testId="chart-requests"
            days={days}
            series={[{ label: 'requests', values: perDay((group) => group.requests), color: '#2f6fdf' }]}
          />
          <DayChart
            title="Tokens per day"
            testId="chart-tokens"
            days={days}
            series={[
              { label: 'input', values: perDay((group) => group.input_tokens), color: '#1a8f5a' },
              { label: 'output', values: perDay((group) => group.output_tokens), color: '#c2571a' },
            ]}
          />
          {costKnown ? (
            <DayChart
              title="Cost per day (USD)"
              testId="chart-cost"
              days={days}
              series={[{ label: 'USD', values: perDay((group) => group.cost_usd ?? 0), color: '#8a3fd1' }]}
            />
          ) : null}
          <BarList
            title="Requests per model"
            rows={summary.byModel.map((group) => ({
              label: group.group || '(no model)',
              value: group.requests,
              detail: `${group.requests} · ${group.input_tokens + group.output_tokens} tok${costKnown ? ` · $${(group.cost_usd ?? 0).toFixed(4)}` : ''}`,
            }))}
          />
          <BarList
            title="Requests per key"
            rows={summary.byKey.map((group) => ({
              label: group.group || '(no key)',
              value: group.requests,
              detail: `${group.requests} · ${group.input_tokens + group.output_tokens} tok${costKnown ? ` · $${(group.cost_usd ?? 0).toFixed(4)}` : ''}`,
            }))}
          />
        </div>
      ) : (
        <p>Loading…</p>
      )}
      {records ? (
        <dl class="percentiles" data-testid="latency">
          <dt>Latency p50</dt>
          <dd>{percentile(latencies, 0.5)} ms</dd>
          <dt>p90</dt>
          <dd>{percentile(latencies, 0.9)} ms</dd>
          <dt>p99</dt>
          <dd>{percentile(latencies, 0.99)} ms</dd>
          <dt>calls</dt>
          <dd>{latencies.length}</dd>
        </dl>
      ) : null}
      <form onSubmit={search} class="row">
        <Field label="Find a call by request id">
          {(id) => <input id={id} value={lookup} required onInput={(event) => setLookup(event.currentTarget.value)} />}
        </Field>
        <button type="submit">Find</button>
      </form>
      {found ? <CallTable caption={`Calls with request id ${lookup}`} records={found} testId="found-calls" /> : null}
      {records ? <CallTable caption="Latest calls" records={records.slice(0, 25)} testId="latest-calls" /> : null}
    </Page>
  );
}

function CallTable(props: { caption: string; records: UsageRecord[]; testId: string }) {
  return (
    <div class="table-wrap">
      <table class="table" data-testid={props.testId}>
        <caption>{props.caption}</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Request id</th>
            <th scope="col">Operation</th>
            <th scope="col">Model</th>
            <th scope="col">Status</th>
            <th scope="col">Tokens in/out</th>
            <th scope="col">Latency</th>
          </tr>
        </thead>
        <tbody>
          {props.records.map((record) => (
            <tr key={record.request_id}>
              <td>{new Date(record.created_at * 1000).toLocaleString()}</td>
              <td>
                <code>{record.request_id}</code>
              </td>
              <td>{record.operation}</td>
              <td>{record.model ?? '—'}</td>
              <td>{record.status}</td>
              <td>
                {record.input_tokens}/{record.output_tokens}
              </td>
              <td>{record.latency_ms} ms</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
