/**
 * The media part of `npm run bench`: how long one image, one spoken sentence and one piece of music take through
 * the gateway's built-in engines (one call at a time: p50/p99), and how many finish per minute when more calls
 * arrive than the pool has workers (every worker busy, the rest queued).
 */
import { percentile } from './percentile.js';

const SENTENCE =
  'The quick brown fox jumps over the lazy dog near the riverbank, while a gentle breeze carries the scent of pine trees across the quiet valley at dawn.';

interface MediaScenario {
  name: string;
  path: string;
  body: object;
}

const SCENARIOS: MediaScenario[] = [
  {
    name: 'image 1024² PNG (local:image)',
    path: '/v1/images/generations',
    body: {
      model: 'local:image',
      prompt: 'a red fox in a snowy forest at sunset',
      size: '1024x1024',
      response_format: 'b64_json',
    },
  },
  {
    name: 'speech 150 chars mp3 (local:speech)',
    path: '/v1/audio/speech',
    body: { model: 'local:speech', input: SENTENCE, voice: 'alloy', response_format: 'mp3' },
  },
  {
    name: 'music 10 s mp3 (local:music)',
    path: '/v1/music/generations',
    body: { model: 'local:music', prompt: 'upbeat piano pop with strings', duration: 10, response_format: 'mp3' },
  },
];

async function call(base: string, key: string, scenario: MediaScenario, seed: number): Promise<number> {
  const started = performance.now();
  const response = await fetch(`${base}${scenario.path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    // A new seed per call: the engines are deterministic, and nothing is cached, but distinct work is honest.
    body: JSON.stringify({ ...scenario.body, seed }),
  });
  await response.arrayBuffer();
  if (!response.ok) {
    throw new Error(`${scenario.name}: HTTP ${response.status}`);
  }
  return performance.now() - started;
}

export async function benchMedia(base: string, key: string, options: { sequential: number; concurrent: number }) {
  const rows = [];
  for (const scenario of SCENARIOS) {
    await call(base, key, scenario, 0); // warm: the worker loads its engine once
    const times: number[] = [];
    for (let i = 1; i <= options.sequential; i += 1) {
      times.push(await call(base, key, scenario, i));
    }
    times.sort((a, b) => a - b);
    const started = performance.now();
    await Promise.all(Array.from({ length: options.concurrent }, (_, i) => call(base, key, scenario, 1000 + i)));
    const seconds = (performance.now() - started) / 1000;
    rows.push({
      scenario: scenario.name,
      'p50 ms': Math.round(percentile(times, 50)),
      'p99 ms': Math.round(percentile(times, 99)),
      [`${options.concurrent} at once: per minute`]: Math.round((options.concurrent / seconds) * 60),
    });
  }
  return rows;
}

/**
 * Seconds of rendering per second of video for `local:video` at the contract's default size (720×1280), from
 * create to completed through the task queue, one task at a time.
 */
export async function benchVideo(base: string, key: string, options: { tasks: number; seconds: number }) {
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${key}` };
  const ratios: number[] = [];
  for (let i = 0; i < options.tasks; i += 1) {
    const started = performance.now();
    const created = await fetch(`${base}/v1/videos`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        model: 'local:video',
        prompt: `waves under a night sky ${i}`,
        seconds: String(options.seconds),
        size: '720x1280',
      }),
    });
    const { id } = (await created.json()) as { id: string };
    for (;;) {
      const task = (await (await fetch(`${base}/v1/videos/${id}`, { headers })).json()) as { status: string };
      if (task.status === 'completed' || task.status === 'failed') {
        if (task.status === 'failed') {
          throw new Error(`video task ${id} failed`);
        }
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    ratios.push((performance.now() - started) / 1000 / options.seconds);
  }
  ratios.sort((a, b) => a - b);
  return {
    scenario: `video ${options.seconds} s 720×1280 (local:video), ${options.tasks} tasks`,
    'render s per video s (p50)': Number(percentile(ratios, 50).toFixed(2)),
    'render s per video s (max)': Number(ratios[ratios.length - 1].toFixed(2)),
  };
}
