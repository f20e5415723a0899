/**
 * The built-in `local:embed` budget (issue 34): 100 short passages embedded in under 50 ms of CPU, off the event
 * loop. Measures the engine's own CPU for a batch of 100 (process.cpuUsage around `lexicalEmbed`, the code the
 * media worker runs, medians of 20 warm batches), then the same batch through a real media worker (wall time of
 * the round trip, and the longest event-loop delay seen meanwhile, which stays near zero because the work is in
 * the worker). Run: `npx tsx bench/embeddings.ts`.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { benchBackgroundEmbedding, printBackgroundEmbedding } from './background-embedding.js';
import { lexicalEmbed } from '../server/engines/embed/lexical-embed.js';
import { createMediaPool } from '../server/engines/media-pool.js';

const words = 'lighthouse keeper lamp wick reef ship harbour night storm beam lens tide rope anchor gull'.split(' ');
const passages = Array.from({ length: 100 }, (_, index) =>
  Array.from({ length: 40 }, (_, word) => words[(index * 7 + word * 3) % words.length]).join(' '),
);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const cpuMs: number[] = [];
for (let run = 0; run < 25; run++) {
  const before = process.cpuUsage();
  lexicalEmbed({ inputs: passages, dimensions: 256 });
  const used = process.cpuUsage(before);
  if (run >= 5) {
    cpuMs.push((used.user + used.system) / 1000);
  }
}
const budget = 50;
const measured = median(cpuMs);
console.log(
  `lexicalEmbed, 100 passages of 40 words, 256 dimensions: ${measured.toFixed(2)} ms CPU (median of 20; budget ${budget} ms) ${measured < budget ? 'OK' : 'OVER BUDGET'}`,
);

const pool = createMediaPool({ workers: 1, queueLimit: 10, jobTimeoutMs: 60_000 });
const run = () =>
  pool.use(new AbortController().signal, (slot) => slot.run('embed', { inputs: passages, dimensions: 256 }));
await run(); // the worker's start and first import
const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
const wall: number[] = [];
for (let index = 0; index < 20; index++) {
  const started = performance.now();
  await run();
  wall.push(performance.now() - started);
}
delay.disable();
console.log(
  `through a media worker: ${median(wall).toFixed(2)} ms wall per batch (median of 20), longest event-loop delay ${(delay.max / 1e6).toFixed(2)} ms`,
);
await pool.close();

// The second budget, chat beside the background embedding of a 10 MB upload: bench/background-embedding.ts.
if (process.env.BENCH_EMBED_UPLOAD !== '0') {
  printBackgroundEmbedding(
    await benchBackgroundEmbedding({
      rounds: Number(process.env.BENCH_EMBED_ROUNDS ?? 3),
      baseline: process.env.BENCH_EMBED_BASELINE,
    }),
  );
}
