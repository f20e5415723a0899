/**
 * How long the built-in composer takes, in a real media worker: the first piece (which also parses the
 * FluidR3Mono bank) and then 10 s, 30 s, 120 s and 300 s pieces, with the process RSS the worker adds.
 * Run: `npx tsx bench/music-render.ts [durations…]` (MUSIC_PROMPT picks the prompt; the strummed folk guitar is
 * the slowest to render). The bank parse alone is timed on this thread first.
 */
import { createMediaPool } from '../server/engines/media-pool.js';
import { loadSoundBank } from '../server/engines/music/render-music.js';

const durations = process.argv
  .slice(2)
  .map(Number)
  .filter((value) => value > 0);
const mb = () => Math.round(process.memoryUsage().rss / 1e6);

const before = mb();
let started = performance.now();
await loadSoundBank();
process.stdout.write(
  `bank parse on this thread: ${Math.round(performance.now() - started)} ms, +${mb() - before} MB RSS\n`,
);

const pool = createMediaPool({ workers: 1, queueLimit: 1, jobTimeoutMs: 120_000 });
const idle = mb();
const prompt = process.env.MUSIC_PROMPT ?? 'Upbeat piano pop with strings, 128 BPM, bright and hopeful';
for (const [label, durationSeconds] of [
  ['first (cold worker, 1 s)', 1],
  ...(durations.length ? durations : [10, 30, 120, 300]).map((d) => [`${d} s`, d] as const),
] as const) {
  started = performance.now();
  await pool.use(new AbortController().signal, (slot) => slot.run('music', { prompt, durationSeconds, seed: 42 }));
  const ms = performance.now() - started;
  process.stdout.write(
    `${label}: ${Math.round(ms)} ms (RTF ${(ms / 1000 / durationSeconds).toFixed(3)}), process RSS ${mb()} MB (+${mb() - idle} MB over idle)\n`,
  );
}
await pool.close();
