/**
 * `/metrics` under `--workers 2` answers for the whole cluster: calls spread over both workers (each on a fresh
 * connection), and every scrape — whichever worker takes it, on the main port with the admin key or on
 * OMNIGATE_METRICS_PORT — counts all of them, not the answering worker's share.
 */
import { request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { parsePrometheusText } from '../helpers/prometheus-text.js';
import { dataDir, killServers, startServer } from '../helpers/spawn-server.js';
import { eventually } from '../helpers/child-processes.js';
import { freePort } from '../helpers/free-port.js';

const KEY = 'og-workers-metrics-Qz8Lm3Vt6Rc1Nx4Pb7Hd2Kw';
const ADMIN = 'og-admin-workers-metrics-Xp5Tn9Wq2Lc7Mv3Jr8Bd';

afterEach(() => killServers());

/** One GET on a fresh connection (no keep-alive), so the primary hands each to a worker afresh. */
function get(port: number, path: string, key: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path, headers: { authorization: `Bearer ${key}` }, agent: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** The sum of `omnigate_requests_total` for one operation in a scrape. */
function requestsOf(text: string, operation: string): number {
  return parsePrometheusText(text)
    .samples.filter((sample) => sample.name === 'omnigate_requests_total' && sample.labels.operation === operation)
    .reduce((sum, sample) => sum + sample.value, 0);
}

describe('metrics of omnigate start --workers 2', () => {
  it("count every worker's calls in every scrape, on the main port and the metrics port", {
    timeout: 240_000,
  }, async () => {
    const metricsPort = await freePort();
    const server = await startServer({
      OMNIGATE_DATA_DIR: dataDir(),
      OMNIGATE_WORKERS: '2',
      OMNIGATE_API_KEYS: KEY,
      OMNIGATE_ADMIN_KEY: ADMIN,
      OMNIGATE_METRICS_PORT: String(metricsPort),
    });
    /** The access lines of `path` (a worker writes one after its answer, with its pid). */
    const requestLines = (path: string) => server.logs().filter((line) => line.msg === 'request' && line.path === path);
    /** The pids of the workers whose access lines show `path`. */
    const servedBy = (path: string) => new Set(requestLines(path).map((line) => line.pid));
    // Calls in batches of 16 until both workers have served some (at most 8 batches): under load the primary may
    // hand a whole batch to one worker while the other is still busy acknowledging its first connection.
    let calls = 0;
    for (let batch = 0; batch < 8 && (batch === 0 || servedBy('/v1/models').size < 2); batch++) {
      const answers = await Promise.all(Array.from({ length: 16 }, () => get(server.port, '/v1/models', KEY)));
      expect(
        answers.map((answer) => answer.status),
        answers[0]?.body,
      ).toEqual(Array(16).fill(200));
      calls += 16;
      // A worker writes its access line after its answer is sent: wait until every call's line has arrived.
      expect(await eventually(() => requestLines('/v1/models').length === calls)).toBe(true);
    }
    // Both workers served some of them (their access lines carry their pids).
    expect(servedBy('/v1/models').size).toBe(2);

    const scrapes = [
      ...(await Promise.all(Array.from({ length: 6 }, () => get(server.port, '/metrics', ADMIN)))),
      ...(await Promise.all(Array.from({ length: 4 }, () => get(metricsPort, '/metrics', '')))),
    ];
    for (const scrape of scrapes) {
      expect(scrape.status, scrape.body).toBe(200);
      expect(requestsOf(scrape.body, 'listModels')).toBe(calls);
    }
    // Either worker holds only its share of the calls, so a scrape counting all of them was aggregated,
    // whichever worker answered it.
    // An API key is still refused.
    expect((await get(server.port, '/metrics', KEY)).status).toBe(401);
  });
});
