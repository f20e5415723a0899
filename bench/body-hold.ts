/**
 * How long the largest accepted JSON bodies hold the event loop (issue 28 item 4).
 * `npx tsx bench/body-hold.ts [n] [name filter]`: for each dialect, sends a body of n minimal messages (default
 * 10,000, the contract's bound) and bodies that fill the JSON token budget (`BUDGET`, default 199,000) with content
 * parts, blocks and tools to a listening test app, and prints the longest event-loop block while each is answered
 * (wall and CPU time, `RUNS` runs each) beside JSON.parse of the same body alone. `PROFILE=/tmp/p` writes a CPU
 * profile of the runs of each body. The figure to compare is the median CPU block (`RUNS` runs, default 5); the
 * wall-clock block is printed beside it but grows with whatever else the machine runs.
 */
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { createTestApp } from '../test/helpers/create-test-app.js';
import { postRaw } from '../test/helpers/post-raw.js';

const n = Number(process.argv[2] ?? 10_000);
const only = process.argv[3];
const t = await createTestApp({ maxBodyBytes: 25 * 1024 * 1024 });
const server = t.app.listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
const port = (server.address() as AddressInfo).port;

const send = (path: string, body: Buffer) => postRaw({ port, key: t.key }, path, body);

async function longestBlock(work: () => Promise<unknown>): Promise<number> {
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  await work();
  await new Promise((r) => setTimeout(r, 20));
  h.disable();
  return h.max / 1e6;
}

/**
 * The most CPU time (ms, of the whole process) spent between two turns of a 1 ms timer while `work` runs: a
 * block of the event loop measured in CPU rather than wall time, so other processes on a loaded machine do
 * not lengthen it (threads of this process running beside the loop, GC helpers, still count).
 */
async function longestCpuBlock(work: () => Promise<unknown>): Promise<number> {
  let longest = 0;
  let last = process.cpuUsage();
  let lastWall = process.hrtime.bigint();
  let running = true;
  const tick = () => {
    const now = process.cpuUsage();
    const wall = process.hrtime.bigint();
    const cpu = (now.user - last.user + now.system - last.system) / 1000;
    longest = Math.max(longest, Math.min(cpu, Number(wall - lastWall) / 1e6));
    last = now;
    lastWall = wall;
    if (running) setTimeout(tick, 1);
  };
  setTimeout(tick, 1);
  await work();
  await new Promise((r) => setTimeout(r, 20));
  running = false;
  return longest;
}

const repeated = (item: string, count: number) => `[${`${item},`.repeat(count - 1)}${item}]`;
const chatUser = '{"role":"user","content":"hi"}';
const cases: Array<[string, string, string]> = [
  ['chat messages', '/v1/chat/completions', `{"model":"local:chat","messages":${repeated(chatUser, n)}}`],
  ['responses input', '/v1/responses', `{"model":"local:chat","input":${repeated(chatUser, n)}}`],
  [
    'anthropic messages',
    '/anthropic/v1/messages',
    `{"model":"local:chat","max_tokens":8,"messages":${repeated(chatUser, n)}}`,
  ],
  [
    'anthropic count_tokens',
    '/anthropic/v1/messages/count_tokens',
    `{"model":"local:chat","messages":${repeated(chatUser, n)}}`,
  ],
  [
    'chat content parts (1,000 × 1,000)',
    '/v1/chat/completions',
    `{"model":"local:chat","messages":${repeated(`{"role":"user","content":${repeated('{"type":"text","text":"x"}', 1000)}}`, Math.max(1, Math.floor(n / 1000)))}}`,
  ],
  [
    'chat tools 512',
    '/v1/chat/completions',
    `{"model":"local:chat","messages":[${chatUser}],"tools":${repeated('{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}', 512)}}`,
  ],
];
// Bodies just under the JSON token budget (MAX_JSON_TOKENS; each shape's keys and values per item in brackets).
const budget = Number(process.env.BUDGET ?? 199_000);
const part = '{"type":"text","text":"x"}'; // 5 with its comma
const parts = (k: number) => repeated(part, k);
cases.push(
  [
    `budget: 10,000 chat messages of parts`,
    '/v1/chat/completions',
    `{"model":"local:chat","messages":${repeated(`{"role":"user","content":${parts(Math.floor((budget / 10_000 - 6) / 5))}}`, 10_000)}}`,
  ],
  [
    `budget: content parts, 1,000 per message`,
    '/v1/chat/completions',
    `{"model":"local:chat","messages":${repeated(`{"role":"user","content":${parts(1000)}}`, Math.floor(budget / 5006))}}`,
  ],
  [
    `budget: Anthropic content blocks, 1,000 per message`,
    '/anthropic/v1/messages',
    `{"model":"local:chat","max_tokens":8,"messages":${repeated(`{"role":"user","content":${parts(1000)}}`, Math.floor(budget / 5006))}}`,
  ],
  [
    `budget: Responses input parts`,
    '/v1/responses',
    `{"model":"local:chat","input":${repeated(`{"role":"user","content":${repeated('{"type":"input_text","text":"x"}', 1000)}}`, Math.floor(budget / 5006))}}`,
  ],
  [
    `budget: 512 tools with wide schemas`,
    '/anthropic/v1/messages',
    `{"model":"local:chat","max_tokens":8,"messages":[${chatUser}],"tools":${repeated(`{"name":"f","input_schema":{"type":"object","properties":{${Array.from({ length: Math.floor((budget / 512 - 10) / 5) }, (_, i) => `"p${i}":{"type":"string"}`).join(',')}}}}`, 512)}}`,
  ],
);
// Single huge strings (24 MiB, under the 25 MiB body limit): Ajv's maxLength/minLength count their code points.
const MiB24 = 24 * 1024 * 1024;
cases.push(
  ['24 MiB audio_base64', '/v1/tools/transcribe_audio', `{"audio_base64":"${'A'.repeat(MiB24)}"}`],
  [
    '24 MiB model string',
    '/v1/tools/image_understanding',
    `{"prompt":"x","image_url":"https://example.com/a.png","model":"${'m'.repeat(MiB24)}"}`,
  ],
  [
    '24 MiB image data URL',
    '/v1/tools/image_understanding',
    `{"prompt":"x","image_url":"data:image/png;base64,${'A'.repeat(MiB24)}"}`,
  ],
  [
    '24 MiB chat model (over maxLength)',
    '/v1/chat/completions',
    `{"model":"${'m'.repeat(MiB24)}","messages":[${chatUser}]}`,
  ],
);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
for (const [name, path, text] of cases) {
  if (only && !name.includes(only)) continue;
  const body = Buffer.from(text);
  const blocks: number[] = [];
  const cpuBlocks: number[] = [];
  let status = 0;
  let head = '';
  await send(path, body); // warm: the validator compiles a route's schema on its first request
  const session = process.env.PROFILE ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    await session.post('Profiler.start');
  }
  for (let i = 0; i < Number(process.env.RUNS ?? 5); i += 1) {
    blocks.push(
      await longestBlock(async () => {
        const r = await send(path, body);
        status = r.status;
        head = r.text.slice(0, 160);
      }),
    );
  }
  for (let i = 0; i < Number(process.env.RUNS ?? 5); i += 1) {
    cpuBlocks.push(await longestCpuBlock(() => send(path, body)));
  }
  if (session) {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(`${process.env.PROFILE}-${name.replace(/\W+/g, '_')}.cpuprofile`, JSON.stringify(profile));
    session.disconnect();
  }
  const parse = await longestBlock(() => new Promise((r) => setTimeout(() => r(JSON.parse(text)), 5)));
  const parseCpu = Math.min(
    await longestCpuBlock(() => new Promise((r) => setTimeout(() => r(JSON.parse(text)), 5))),
    await longestCpuBlock(() => new Promise((r) => setTimeout(() => r(JSON.parse(text)), 5))),
    await longestCpuBlock(() => new Promise((r) => setTimeout(() => r(JSON.parse(text)), 5))),
  );
  console.log(
    `${name}: ${(body.length / 1e6).toFixed(2)} MB → ${status}; longest block ${blocks.map((b) => b.toFixed(0)).join('/')} ms; CPU block ${cpuBlocks.map((b) => b.toFixed(0)).join('/')} ms (median ${median(cpuBlocks).toFixed(1)}); JSON.parse alone ${parse.toFixed(0)} ms (CPU ${parseCpu.toFixed(0)} ms)${status !== 200 ? ` ${head}` : ''}`,
  );
}
server.close();

process.exit(0);
