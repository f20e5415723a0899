/**
 * Token counting never freezes the gateway: adversarial prompts (one character repeated, up to the body
 * limit) are counted while /health keeps answering, the built-in model answers a huge prompt quickly, and
 * a 10 MB passthrough answer without usage is billed in bounded time and memory.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeUpstream } from '../fakes/fake-upstream.js';
import { MAX_ECHO_CHARS } from '../../server/providers/local/reference-reply.js';
import { createTestApp, type TestApp } from '../helpers/create-test-app.js';
import { measureLoopHold, processCpuMs, threadCpuMs } from '../helpers/cpu-time.js';
import { dataDir, killServers, startServer } from '../helpers/spawn-server.js';

const MiB = 1024 * 1024;
const KEY = 'og-token-counting-load-test-key-0123456789';
const BODY_LIMIT = 25 * MiB;
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  killServers();
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function listen(testApp: TestApp): Promise<string> {
  const server: Server = testApp.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/**
 * Polls GET /health every ~10 ms until stopped. `slowestCpuMs` is the most CPU time the server's event-loop
 * thread (`pid`'s main thread) spent while one /health answer was awaited: what the answer waited behind, in a
 * measure a busy machine does not stretch (wall time would).
 */
function pollHealth(origin: string, pid: number): { stop(): Promise<{ slowestCpuMs: number; polls: number }> } {
  let running = true;
  let slowestCpuMs = 0;
  let polls = 0;
  const loop = (async () => {
    while (running) {
      const cpuBefore = threadCpuMs(pid);
      const response = await fetch(`${origin}/health`);
      await response.arrayBuffer();
      expect(response.status).toBe(200);
      slowestCpuMs = Math.max(slowestCpuMs, threadCpuMs(pid) - cpuBefore);
      polls += 1;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { slowestCpuMs, polls };
    },
  };
}

/**
 * `body` as bytes prepared before the clock starts: this process is the client too, and encoding a 25 MiB
 * string at send time would block the very event loop the test watches.
 */
async function post(
  origin: string,
  path: string,
  key: string,
  body: string | Buffer,
): Promise<{ status: number; json: Record<string, unknown>; headers: Headers }> {
  const response = await fetch(`${origin}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body as unknown as string,
  });
  return {
    status: response.status,
    json: (await response.json()) as Record<string, unknown>,
    headers: response.headers,
  };
}

describe('counting adversarial prompts', () => {
  it('count_tokens of 100,000 `A` and of a body at the body limit while /health keeps answering', async () => {
    // The real server in its own process, so that only the server's event loop is measured, not this one
    // (which builds and sends the 25 MiB body).
    const server = await startServer({ OMNIGATE_DATA_DIR: dataDir(), OMNIGATE_API_KEYS: KEY });
    const origin = `http://127.0.0.1:${server.port}`;
    const testApp = { key: KEY };
    const countBody = (content: string) =>
      JSON.stringify({ model: 'local:chat', max_tokens: 1, messages: [{ role: 'user', content }] });
    // One message of a single character up to the limit: one pre-token, the quadratic case of BPE.
    const small = Buffer.from(countBody('A'.repeat(100_000)));
    const maximal = Buffer.from(countBody('中'.repeat(Math.floor((BODY_LIMIT - 200) / 3))));
    expect(Buffer.byteLength(maximal)).toBeGreaterThan(BODY_LIMIT - 1024);

    const pid = server.child.pid!;
    // The control: the same body on the same route where nothing is counted (an unknown model is refused after
    // the body is parsed and validated), so what /health waits behind there is the parse and validation alone, on
    // this machine now. A small body first compiles the route's validator, which the control must not pay.
    const unknownModel = (body: Buffer) => Buffer.from(body.toString().replace('"local:chat"', '"no-such-model"'));
    expect((await post(origin, '/anthropic/v1/messages/count_tokens', testApp.key, unknownModel(small))).status).toBe(
      404,
    );
    const control = pollHealth(origin, pid);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const refused = await post(origin, '/anthropic/v1/messages/count_tokens', testApp.key, unknownModel(maximal));
    const { slowestCpuMs: controlCpuMs, polls: controlPolls } = await control.stop();
    expect(refused.status).toBe(404);
    expect(controlPolls).toBeGreaterThan(3);

    const health = pollHealth(origin, pid);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const cpuBefore = processCpuMs(pid);
    const first = await post(origin, '/anthropic/v1/messages/count_tokens', testApp.key, small);
    const second = await post(origin, '/anthropic/v1/messages/count_tokens', testApp.key, maximal);
    const serverCpuMs = processCpuMs(pid) - cpuBefore;
    const { slowestCpuMs, polls } = await health.stop();

    expect(first.status).toBe(200);
    expect(first.json.input_tokens).toBeGreaterThan(100_000 / 128);
    expect(second.status).toBe(200);
    expect(second.json.input_tokens).toBeGreaterThan(Math.floor((BODY_LIMIT - 200) / 3) / 128);
    expect(polls).toBeGreaterThan(3);
    // /health waits behind parsing the 25 MiB body at most, as in the control (both about 290 ms of the server
    // thread's CPU at load 11, 120 ms on a quiet machine). Counting on the event loop (even only the 512 Ki chars
    // counted exactly) made it about 350 ms against 120. Both are the server thread's CPU, stretched alike by load.
    expect(slowestCpuMs, `control ${controlCpuMs} ms`).toBeLessThan(1.6 * controlCpuMs + 30);
    // The server's CPU for both counts, every thread, is bounded too.
    expect(serverCpuMs).toBeLessThan(15_000);
  }, 120_000);

  it('local:chat answers a 5 MB single-character prompt quickly, echoing at most MAX_ECHO_CHARS chars', async () => {
    const testApp = await createTestApp({ maxBodyBytes: BODY_LIMIT });
    const origin = await listen(testApp);
    const { result: answer, cpuMs } = await measureLoopHold(() =>
      post(
        origin,
        '/v1/chat/completions',
        testApp.key,
        JSON.stringify({ model: 'local:chat', messages: [{ role: 'user', content: 'A'.repeat(5 * MiB) }] }),
      ),
    );
    expect(answer.status).toBe(200);
    expect(cpuMs).toBeLessThan(10_000);
    const choices = answer.json.choices as Array<{ message: { content: string } }>;
    expect(choices[0].message.content).toBe(`You said: ${'A'.repeat(MAX_ECHO_CHARS)}`);
    expect((answer.json.usage as { prompt_tokens: number }).prompt_tokens).toBeGreaterThan((5 * MiB) / 128);
  });
});

describe('passthrough answers without usage', () => {
  it('bills a 10 MB streamed answer of `B` in bounded time and memory', async () => {
    const upstream = await startFakeUpstream((_request, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (delta: object, finish: string | null) =>
        `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      const piece = chunk({ content: 'B'.repeat(10_000) }, null);
      let sent = 0;
      // 1,000 events of 10,000 `B`, written as the socket drains.
      const write = () => {
        while (sent < 1_000) {
          sent += 1;
          if (!res.write(piece)) {
            res.once('drain', write);
            return;
          }
        }
        res.end(`${chunk({}, 'stop')}data: [DONE]\n\n`);
      };
      write();
    });
    closers.push(() => upstream.close());
    const testApp = await createTestApp({
      providers: [
        {
          id: 'fake',
          type: 'openai-compatible',
          base_url: `${upstream.origin}/v1`,
          timeout_ms: 60_000,
          max_connections: 4,
          headers: {},
          responses: 'translate',
        },
      ],
    });
    const origin = await listen(testApp);
    // The route's first call builds its validators (hundreds of ms of CPU on a loaded machine): not what is measured.
    const warm = await fetch(`${origin}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${testApp.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'local:chat', stream: true, messages: [{ role: 'user', content: 'warm' }] }),
    });
    expect(warm.status).toBe(200);
    await warm.text();

    const rssBefore = process.memoryUsage().rss;
    let rssPeak = rssBefore;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 20);
    // The gateway runs on this thread, so the longest stretch of this thread's CPU between two turns of the event
    // loop is what the gateway held it for; the process's CPU (gateway, encoder thread and fake upstream) is bounded.
    const {
      result: response,
      longestHoldMs,
      cpuMs,
    } = await measureLoopHold(async () => {
      const response = await fetch(`${origin}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${testApp.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'fake:m', stream: true, messages: [{ role: 'user', content: 'Say B.' }] }),
      });
      let received = 0;
      for await (const piece of response.body as AsyncIterable<Uint8Array>) {
        received += piece.length;
      }
      expect(received).toBeGreaterThan(10_000_000);
      return response;
    });
    clearInterval(sampler);

    expect(response.status).toBe(200);
    expect(cpuMs).toBeLessThan(20_000);
    // A few ms of CPU once the route is warm; a count of the whole 10 MB answer on the event loop would hold it for
    // well over a second of CPU.
    expect(longestHoldMs).toBeLessThan(250);
    // The caller's own copy of the stream is in this process too; the gateway keeps no copy of it.
    expect(rssPeak - rssBefore).toBeLessThan(300 * MiB);
    const requestId = response.headers.get('x-svc-request-id') as string;
    let record: { output_tokens: number } | undefined;
    for (let attempt = 0; attempt < 100 && !record; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      const usage = await fetch(`${origin}/v1/usage?request_id=${requestId}`, {
        headers: { authorization: `Bearer ${testApp.key}` },
      });
      record = ((await usage.json()) as { data: Array<{ output_tokens: number }> }).data[0];
    }
    // 10,000,000 `B`: estimated from the first 512 Ki chars (a run of one letter is about 8 chars a token).
    expect(record?.output_tokens).toBeGreaterThan(10_000_000 / 16);
    expect(record?.output_tokens).toBeLessThan(10_000_000 / 2);
  });
});
