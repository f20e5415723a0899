/**
 * `GET /metrics` of the started server after a known mix of calls: request counts, token sums, refusals and
 * upstream failures exactly right, histograms consistent; the admin key is the only way in on the main port
 * (no key and an API key are refused alike), and the separate metrics port answers without one.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sendJson, sseHead } from '../fakes/answers.js';
import { startFakeUpstream, type FakeUpstream } from '../fakes/fake-upstream.js';
import { checkHistogram, parsePrometheusText, sampleValue } from '../helpers/prometheus-text.js';
import { dataDir, killServers, startServer } from '../helpers/spawn-server.js';

const API_KEY = 'og-metrics-test-key-aaaaaaaaaaaaaaaaaaaa';
const ADMIN_KEY = 'og-admin-metrics-test-bbbbbbbbbbbbbbbbbbbb';
const upstreams: FakeUpstream[] = [];

afterEach(async () => {
  killServers();
  await Promise.all(upstreams.splice(0).map((upstream) => upstream.close()));
});

function completion(usage: Record<string, unknown>): string {
  return JSON.stringify({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1767225600,
    model: 'good',
    choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }],
    usage,
  });
}

function chunk(extra: Record<string, unknown>): string {
  return `data: ${JSON.stringify({ id: 'chatcmpl-2', object: 'chat.completion.chunk', created: 1767225600, model: 'slow', ...extra })}\n\n`;
}

describe('GET /metrics', () => {
  it('counts a known mix of calls exactly, keeps histograms consistent, and is reachable with the admin key or on the metrics port only', {
    timeout: 180_000,
  }, async () => {
    let releaseStream!: () => void;
    const streamReleased = new Promise<void>((resolve) => {
      releaseStream = resolve;
    });
    const upstream = await startFakeUpstream(async (request, res) => {
      const model = (request.body as { model?: string }).model;
      if (model === 'good') {
        sendJson(
          res,
          200,
          completion({
            prompt_tokens: 11,
            completion_tokens: 7,
            total_tokens: 18,
            prompt_tokens_details: { cached_tokens: 3 },
            completion_tokens_details: { reasoning_tokens: 2 },
          }),
        );
      } else if (model === 'limited') {
        sendJson(res, 429, JSON.stringify({ error: { message: 'slow down' } }), { 'retry-after': '1' });
      } else if (model === 'broken') {
        sendJson(res, 500, JSON.stringify({ error: { message: 'boom' } }));
      } else {
        // A stream held open after its first event until the test lets it finish.
        sseHead(res);
        res.write(chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: 'he' }, finish_reason: null }] }));
        await streamReleased;
        res.write(chunk({ choices: [{ index: 0, delta: { content: 'llo' }, finish_reason: 'stop' }] }));
        res.write(chunk({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 } }));
        res.end('data: [DONE]\n\n');
      }
    });
    upstreams.push(upstream);
    const dir = dataDir();
    const config = path.join(dir, 'omnigate.yaml');
    writeFileSync(
      config,
      `providers:\n  up:\n    type: openai-compatible\n    base_url: ${upstream.origin}/v1\nmodels:\n  - { provider: up, model: good }\n  - { provider: up, model: limited }\n  - { provider: up, model: broken }\n  - { provider: up, model: slow }\nprices:\n  "up:good": { input: 1000, output: 2000 }\n`,
    );
    const server = await startServer({
      OMNIGATE_DATA_DIR: dir,
      OMNIGATE_API_KEYS: API_KEY,
      OMNIGATE_ADMIN_KEY: ADMIN_KEY,
      OMNIGATE_METRICS_PORT: '0',
      OMNIGATE_MEDIA_WORKERS: '3',
      OMNIGATE_CONFIG: config,
    });
    const base = `http://127.0.0.1:${server.port}`;
    const chat = (model: string, stream = false, key: string | null = API_KEY) =>
      fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
        body: JSON.stringify({
          model,
          messages: [{ role: 'user', content: 'hi' }],
          ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
        }),
      });
    const scrape = async () => {
      const response = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      return parsePrometheusText(await response.text());
    };

    // The known mix: 3 answered, 1 upstream 429, 1 upstream 500, 1 unknown model, 1 without a key.
    for (let i = 0; i < 3; i++) {
      expect((await chat('up:good')).status).toBe(200);
    }
    expect((await chat('up:limited')).status).toBe(429);
    expect((await chat('up:broken')).status).toBe(502);
    expect((await chat('no-such-model')).status).toBe(404);
    expect((await chat('up:good', false, null)).status).toBe(401);
    // Refused on the main port: no key, an API key, a wrong admin key (3 more 401s of no operation).
    for (const authorization of [undefined, `Bearer ${API_KEY}`, 'Bearer og-not-the-admin-key']) {
      const refused = await fetch(`${base}/metrics`, { headers: authorization ? { authorization } : {} });
      expect(refused.status).toBe(401);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('admin_key_required');
    }

    // A stream held open: the gauge sees it.
    const streaming = await chat('up:slow', true);
    expect(streaming.status).toBe(200);
    const reader = streaming.body!.getReader();
    await reader.read();
    const during = await scrape();
    expect(sampleValue(during, 'omnigate_open_streams')).toBe(1);
    releaseStream();
    while (!(await reader.read()).done) {
      // read the stream to its end
    }

    // The stream's record is finalised after its last token; wait until it is counted.
    let metrics = await scrape();
    for (
      let tries = 0;
      tries < 100 &&
      sampleValue(metrics, 'omnigate_requests_total', {
        operation: 'createChatCompletion',
        status_class: '2xx',
        model: 'up:slow',
      }) !== 1;
      tries++
    ) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      metrics = await scrape();
    }
    const requests = (labels: Record<string, string>) => sampleValue(metrics, 'omnigate_requests_total', labels);
    expect(requests({ operation: 'createChatCompletion', status_class: '2xx', model: 'up:good' })).toBe(3);
    expect(requests({ operation: 'createChatCompletion', status_class: '2xx', model: 'up:slow' })).toBe(1);
    expect(requests({ operation: 'createChatCompletion', status_class: '4xx', model: 'up:limited' })).toBe(1);
    expect(requests({ operation: 'createChatCompletion', status_class: '5xx', model: 'up:broken' })).toBe(1);
    // The unknown model is no label value of its own: a raw request string never becomes a series.
    expect(requests({ operation: 'createChatCompletion', status_class: '4xx', model: 'none' })).toBe(1);
    expect(metrics.samples.some((sample) => Object.values(sample.labels).includes('no-such-model'))).toBe(false);
    expect(requests({ operation: 'unknown', status_class: '4xx', model: 'none' })).toBe(4);
    // Per-key labels are off by default.
    expect(metrics.samples.some((sample) => 'key_id' in sample.labels)).toBe(false);

    const tokens = (model: string, type: string) => sampleValue(metrics, 'omnigate_tokens_total', { model, type });
    expect(tokens('up:good', 'input')).toBe(33);
    expect(tokens('up:good', 'output')).toBe(21);
    expect(tokens('up:good', 'cached_input')).toBe(9);
    expect(tokens('up:good', 'reasoning')).toBe(6);
    expect(tokens('up:slow', 'input')).toBe(5);
    expect(tokens('up:slow', 'output')).toBe(4);
    // Cost: the priced model's calls, the same sum as their usage records' cost_usd; the unpriced model has none.
    const records = await eventuallyRecords(base, 3 + 1 + 1 + 1 + 1);
    const recordedCost = records
      .filter((record) => record.model === 'up:good')
      .reduce((sum, record) => sum + record.cost_usd, 0);
    expect(recordedCost).toBeGreaterThan(0);
    expect(sampleValue(metrics, 'omnigate_cost_usd_total', { model: 'up:good' })).toBeCloseTo(recordedCost, 12);
    expect(sampleValue(metrics, 'omnigate_cost_usd_total', { model: 'up:slow' })).toBeUndefined();

    expect(sampleValue(metrics, 'omnigate_upstream_requests_total', { provider: 'up' })).toBe(6);
    expect(sampleValue(metrics, 'omnigate_upstream_failures_total', { provider: 'up', cause: 'rate_limited' })).toBe(1);
    expect(sampleValue(metrics, 'omnigate_upstream_failures_total', { provider: 'up', cause: 'status_5xx' })).toBe(1);
    expect(sampleValue(metrics, 'omnigate_refusals_total', { reason: 'rate_limit_exceeded' })).toBe(1);
    expect(sampleValue(metrics, 'omnigate_open_streams')).toBe(0);

    // Histograms: monotonic buckets, +Inf equal to the count, one observation per chat call (7), 1 ms buckets.
    const durations = checkHistogram(metrics, 'omnigate_request_duration_seconds');
    const firstBytes = checkHistogram(metrics, 'omnigate_time_to_first_byte_seconds');
    expect(durations.get(JSON.stringify({ operation: 'createChatCompletion' }))).toBe(7);
    expect(firstBytes.get(JSON.stringify({ operation: 'createChatCompletion' }))).toBe(7);
    const les = metrics.samples
      .filter(
        (s) => s.name === 'omnigate_request_duration_seconds_bucket' && s.labels.operation === 'createChatCompletion',
      )
      .map((s) => s.labels.le);
    expect(les).toContain('0.001');
    expect(les).toContain('60');

    // The pool, the usage buffer, video tasks, event-loop delay and process metrics are there.
    expect(sampleValue(metrics, 'omnigate_media_pool_slots')).toBe(3);
    expect(sampleValue(metrics, 'omnigate_media_pool_slots_busy')).toBe(0);
    expect(sampleValue(metrics, 'omnigate_media_pool_queue_length')).toBe(0);
    expect(sampleValue(metrics, 'omnigate_video_tasks', { state: 'queued' })).toBe(0);
    expect(sampleValue(metrics, 'omnigate_usage_buffer_depth')).toBeGreaterThanOrEqual(0);
    expect(sampleValue(metrics, 'omnigate_usage_records_dropped_total')).toBe(0);
    expect(sampleValue(metrics, 'nodejs_eventloop_lag_p99_seconds')).toBeGreaterThan(0);
    expect(sampleValue(metrics, 'process_cpu_seconds_total')).toBeGreaterThan(0);

    // The metrics port: no key needed, nothing else served.
    const line = server.logs().find((entry) => entry.msg === 'metrics listening');
    expect(line).toBeDefined();
    const metricsBase = `http://127.0.0.1:${line!.port as number}`;
    const open = await fetch(`${metricsBase}/metrics`);
    expect(open.status).toBe(200);
    const openText = parsePrometheusText(await open.text());
    expect(
      sampleValue(openText, 'omnigate_requests_total', {
        operation: 'createChatCompletion',
        status_class: '2xx',
        model: 'up:good',
      }),
    ).toBe(3);
    expect((await fetch(`${metricsBase}/v1/models`)).status).toBe(404);
  });
});

/** The key's usage records once at least `count` are written (the recorder writes in batches). */
async function eventuallyRecords(
  base: string,
  count: number,
): Promise<Array<{ model: string | null; cost_usd: number }>> {
  for (let tries = 0; ; tries++) {
    const response = await fetch(`${base}/v1/usage?limit=100`, { headers: { authorization: `Bearer ${API_KEY}` } });
    const { data } = (await response.json()) as { data: Array<{ model: string | null; cost_usd: number }> };
    if (data.length >= count || tries >= 200) {
      return data;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
