/**
 * How long the largest accepted bodies hold the event loop while they are received, parsed, validated and decoded
 * (issue 28: "a body that would block the event loop for more than a few milliseconds is refused, not
 * processed"). `npx tsx bench/body-decode-hold.ts [filter]`: sends each body `RUNS` times (default 7, after one
 * warm-up) to a listening test app in this process and prints, median and max over the runs:
 *
 * - `gap`: the longest wall-clock gap between two turns of the event loop (monitorEventLoopDelay, resolution 1 ms;
 *   what a concurrent request would have waited; other processes on a loaded machine lengthen it);
 * - `CPU hold`: the longest stretch between two turns of a 1 ms timer measured in process CPU time (capped at its
 *   wall time, so a body thread running beside the loop counts no more than the stretch lasted): a block of the loop
 *   that waiting for a core does not lengthen, unlike `gap`;
 * - `main CPU`: the main thread's CPU time over the whole request (/proc schedstat, body threads not counted);
 * - beside them, `in place`: the main-thread CPU of what the body costs without body threads — JSON.parse of the
 *   body and Buffer.from(…, 'base64') of its big string — measured here, the control.
 *
 * `PROFILE=/tmp/p` writes a CPU profile of each body's runs (`/tmp/p-<body>.cpuprofile`).
 *
 * The client is this process too, but sends a prepared buffer (the socket writes it), so the figures are the
 * server's. The uptime load average is printed: the figures mean little on a machine busy with other work.
 */
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { threadCpuMs } from '../test/helpers/cpu-time.js';
import { createTestApp } from '../test/helpers/create-test-app.js';
import { postRaw } from '../test/helpers/post-raw.js';

const only = process.argv[2];
const runs = Number(process.env.RUNS ?? 7);
const t = await createTestApp({ maxBodyBytes: 25 * 1024 * 1024 });
const server = t.app.listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
const port = (server.address() as AddressInfo).port;

const send = (path: string, body: Buffer) => postRaw({ port, key: t.key }, path, body);

const MiB24 = 24 * 1024 * 1024;
const base64 = Buffer.alloc((MiB24 / 4) * 3, 0x5a).toString('base64'); // 24 MiB of plain base64
const part = '{"type":"text","text":"x"}';
const repeated = (item: string, count: number) => `[${`${item},`.repeat(count - 1)}${item}]`;
const cases: Array<{ name: string; path: string; text: string; big?: string }> = [
  {
    name: '24 MiB audio_base64 (transcribe_audio)',
    path: '/v1/tools/transcribe_audio',
    text: `{"audio_base64":"${base64}"}`,
    big: base64,
  },
  {
    name: '24 MiB image data URL (chat)',
    path: '/v1/chat/completions',
    text: `{"model":"local:chat","max_tokens":4,"messages":[{"role":"user","content":[{"type":"text","text":"what is it?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,${base64}"}}]}]}`,
    big: base64,
  },
  {
    name: '24 MiB image data URL (image_understanding)',
    path: '/v1/tools/image_understanding',
    text: `{"prompt":"x","image_url":"data:image/png;base64,${base64}"}`,
    big: base64,
  },
  {
    // 10,000 messages of 2 parts: ~150,000 keys and values, just under the JSON token budget (200,000).
    name: 'JSON token budget (chat, 10,000 messages of 2 parts)',
    path: '/v1/chat/completions',
    text: `{"model":"local:chat","max_tokens":4,"messages":${repeated(`{"role":"user","content":${repeated(part, 2)}}`, 10_000)}}`,
  },
];

/** The longest stretch of process CPU (capped at its wall time) between two turns of a 1 ms timer, until stopped. */
function cpuHoldProbe(): { stop: () => number } {
  let longest = 0;
  let lastCpu = process.cpuUsage();
  let lastWall = performance.now();
  const timer = setInterval(() => {
    const cpu = process.cpuUsage();
    const wall = performance.now();
    const spent = (cpu.user - lastCpu.user + cpu.system - lastCpu.system) / 1000;
    longest = Math.max(longest, Math.min(spent, wall - lastWall));
    lastCpu = cpu;
    lastWall = wall;
  }, 1);
  return {
    stop() {
      clearInterval(timer);
      return longest;
    },
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const f = (value: number) => value.toFixed(1);
console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}, ${runs} runs per body`,
);
for (const { name, path, text, big } of cases) {
  if (only && !name.includes(only)) continue;
  const body = Buffer.from(text);
  const first = await send(path, body); // warm: the validator compiles a route's schema on its first request
  const gaps: number[] = [];
  const cpus: number[] = [];
  const holds: number[] = [];
  const session = process.env.PROFILE ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    await session.post('Profiler.start');
  }
  for (let i = 0; i < runs; i += 1) {
    await new Promise((r) => setTimeout(r, 50));
    const h = monitorEventLoopDelay({ resolution: 1 });
    h.enable();
    const before = threadCpuMs();
    const probe = cpuHoldProbe();
    await send(path, body);
    cpus.push(threadCpuMs() - before);
    holds.push(probe.stop());
    await new Promise((r) => setTimeout(r, 5));
    h.disable();
    gaps.push(Math.max(0, h.max / 1e6 - 1)); // the histogram counts the 1 ms resolution as delay
  }
  if (session) {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(`${process.env.PROFILE}-${name.replace(/\W+/g, '_')}.cpuprofile`, JSON.stringify(profile));
    session.disconnect();
  }
  const controls: number[] = [];
  for (let i = 0; i < 3; i += 1) {
    const before = threadCpuMs();
    JSON.parse(text);
    if (big) Buffer.from(big, 'base64');
    controls.push(threadCpuMs() - before);
  }
  console.log(
    `${name}: ${(body.length / 1048576).toFixed(1)} MiB → ${first.status}; gap median ${f(median(gaps))} max ${f(Math.max(...gaps))} ms; ` +
      `CPU hold median ${f(median(holds))} max ${f(Math.max(...holds))} ms; main CPU median ${f(median(cpus))} ms; in place (JSON.parse${big ? ' + base64' : ''}) ${f(median(controls))} ms` +
      `${first.status >= 400 ? ` — ${first.text.slice(0, 140)}` : ''}`,
  );
}
server.close();
process.exit(0);
