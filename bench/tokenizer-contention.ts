/**
 * The tokenizer-contention part of `npm run bench`: chat JSON latency at concurrency 1 with the tokenizer thread
 * idle, then while `count_tokens` of a ~390 KB prompt (for a model whose upstream cannot count, so the gateway's
 * tokenizer thread counts it) runs back to back. The thread shares the gateway's pinned core with the event loop;
 * it runs at a lower priority (server/engines/pool/thread-priority.ts), so the busy column should read like the
 * idle one.
 */
import { Client } from 'undici';
import { percentile } from './percentile.js';

export interface ContentionRow {
  tokenizer: 'idle' | 'busy';
  requests: number;
  'p50 ms': number;
  'p90 ms': number;
  'p99 ms': number;
  counts: number;
}

const PROMPT = 'The gateway counts tokens on a thread of its own, word by word. '.repeat(6000);

/** Chat JSON requests one after another for `seconds`, each timed (autocannon rounds latencies to whole ms). */
async function chatAtConcurrencyOne(base: string, key: string, seconds: number): Promise<number[]> {
  const client = new Client(base, { pipelining: 1 });
  const body = JSON.stringify({ model: 'bench', messages: [{ role: 'user', content: 'Say something about foxes.' }] });
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${key}` };
  const latencies: number[] = [];
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) {
    const start = performance.now();
    const response = await client.request({ path: '/v1/chat/completions', method: 'POST', headers, body });
    await response.body.dump();
    if (response.statusCode !== 200) {
      throw new Error(`chat answered ${response.statusCode}`);
    }
    latencies.push(performance.now() - start);
  }
  await client.close();
  return latencies.sort((a, b) => a - b);
}

export async function benchTokenizerContention(base: string, key: string, seconds = 4): Promise<ContentionRow[]> {
  const countBody = JSON.stringify({ model: 'bench', messages: [{ role: 'user', content: PROMPT }] });
  const countOnce = async () => {
    const response = await fetch(`${base}/anthropic/v1/messages/count_tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: countBody,
    });
    if (!response.ok) {
      throw new Error(`count_tokens answered ${response.status}`);
    }
    await response.arrayBuffer();
  };
  await countOnce(); // starts the thread
  await chatAtConcurrencyOne(base, key, 1); // warm-up
  const rows: ContentionRow[] = [];
  for (const tokenizer of ['idle', 'busy'] as const) {
    let counts = 0;
    let stop = false;
    const counting =
      tokenizer === 'busy'
        ? (async () => {
            while (!stop) {
              await countOnce();
              counts += 1;
            }
          })()
        : Promise.resolve();
    const latencies = await chatAtConcurrencyOne(base, key, seconds);
    stop = true;
    await counting;
    const [p50, p90, p99] = [50, 90, 99].map((p) => Number(percentile(latencies, p).toFixed(2)));
    rows.push({ tokenizer, requests: latencies.length, 'p50 ms': p50, 'p90 ms': p90, 'p99 ms': p99, counts });
  }
  return rows;
}
