/**
 * `npm run soak`: memory over time under steady mixed load, the check a benchmark cannot make. The gateway
 * (`dist/main.js`, as `npm start` runs it) routes to bench/fake-upstream-server.ts; this process fires
 * SOAK_RATE requests per second on a fixed schedule (open loop, like the perf kit's 1,000 req/s phase), a
 * SOAK_STREAM_SHARE of them streamed, for SOAK_MINUTES, and samples the gateway's resident memory every
 * SAMPLE_EVERY_MS. It prints the samples and each minute's floor (its lowest sample): RSS rises and falls by tens of
 * MiB as the heap grows between collections, so two medians compare phases of that sawtooth more than anything;
 * the floor after collections is what a leak lifts, minute after minute, while a heap that settles keeps it flat
 * once warm (the first minute is the warm-up).
 */
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';
import { freePort, KEY, median, startChild, startGateway } from './children.js';

const MINUTES = Number(process.env.SOAK_MINUTES ?? 10);
const RATE = Number(process.env.SOAK_RATE ?? 500);
const STREAM_SHARE = Number(process.env.SOAK_STREAM_SHARE ?? 0.2);
const SAMPLE_EVERY_MS = 10_000;

function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((text) => text.startsWith('VmRSS:'))!;
  return Number(line.split(/\s+/)[1]) / 1024;
}

async function main(): Promise<void> {
  const upstreamPort = await freePort();
  const upstream = await startChild('bench/fake-upstream-server.ts', upstreamPort, {}, '1');
  // The default log level, as a user runs it: the access log is part of what is soaked.
  const gateway = await startGateway(upstreamPort);
  const pool = new Pool(`http://127.0.0.1:${gateway.port}`, { connections: 256 });
  const messages = [{ role: 'user', content: 'Say something about foxes.' }];
  const bodies = [
    JSON.stringify({ model: 'bench', messages }),
    JSON.stringify({ model: 'bench', messages, stream: true }),
  ];
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${KEY}` };
  let sent = 0;
  let failed = 0;
  const started = performance.now();
  const endAt = started + MINUTES * 60_000;
  const samples: Array<{ minute: number; rssMiB: number }> = [];
  const sampler = setInterval(() => {
    const sample = { minute: (performance.now() - started) / 60_000, rssMiB: rssMiB(gateway.pid) };
    samples.push(sample);
    console.log(`${sample.minute.toFixed(2)} min  ${sample.rssMiB.toFixed(0)} MiB  sent ${sent}  failed ${failed}`);
  }, SAMPLE_EVERY_MS);
  await new Promise<void>((resolve) => {
    const fire = () => {
      const now = performance.now();
      const due = Math.floor(((now - started) / 1000) * RATE);
      while (sent < due) {
        sent += 1;
        const body = Math.random() < STREAM_SHARE ? bodies[1] : bodies[0];
        pool
          .request({ method: 'POST', path: '/v1/chat/completions', headers, body })
          .then(async (response) => {
            await response.body.dump({ limit: Infinity });
            if (response.statusCode !== 200) {
              failed += 1;
            }
          })
          .catch(() => {
            failed += 1;
          });
      }
      if (now < endAt) {
        setTimeout(fire, 1);
      } else {
        resolve();
      }
    };
    fire();
  });
  clearInterval(sampler);
  await pool.close();
  const floors: number[] = [];
  for (let minute = 0; minute < MINUTES; minute += 1) {
    const inMinute = samples
      .filter((sample) => sample.minute > minute && sample.minute <= minute + 1)
      .map((sample) => sample.rssMiB);
    if (inMinute.length > 0) {
      floors.push(Math.min(...inMinute));
    }
  }
  const warm = floors[Math.min(1, floors.length - 1)];
  const growth = floors[floors.length - 1] - warm;
  console.log(
    `\n${MINUTES} min at ${RATE} req/s (${Math.round(STREAM_SHARE * 100)}% streamed): ${sent} sent, ${failed} failed; ` +
      `RSS median ${median(samples.map((sample) => sample.rssMiB)).toFixed(0)} MiB; floor of each minute ${floors.map((floor) => floor.toFixed(0)).join(' ')} MiB: ` +
      `the last minute's ${(growth >= 0 ? '+' : '') + growth.toFixed(0)} MiB against the second's (the first is the warm-up)`,
  );
  await gateway.stop();
  await upstream.stop();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
