/**
 * The encoder thread starts on the first job, exits when idle, and never fails a count: when it cannot answer
 * (dead, too slow, too many waiting) the count is the rough estimate and a warning is logged.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { BACKGROUND_NICENESS } from '../engines/pool/thread-priority.js';
import {
  createEncoder,
  ENCODER_BATCH_CHARS,
  ROUGH_CHARS_PER_TOKEN,
  type Encoder,
  type EncoderOptions,
} from './encoder-client.js';
import { TokenCounter } from './token-counter.js';

const dyingEntry = new URL('../../test/fakes/dying-encoder-worker.ts', import.meta.url);
const batchSizeEntry = new URL('../../test/fakes/batch-size-encoder-worker.ts', import.meta.url);

let encoders: Encoder[] = [];
let warnings: Array<{ details: object; message: string }> = [];

/**
 * The job timeout is a generous guard unless a test is about it: the production 10 s includes loading the ranks
 * on a fresh thread, which a machine busy with other suites can stretch past it, turning an exact count rough.
 */
function makeEncoder(options: EncoderOptions = {}): Encoder {
  const encoder = createEncoder({
    warnings: { warn: (details, message) => warnings.push({ details, message }) },
    jobTimeoutMs: 120_000,
    ...options,
  });
  encoders.push(encoder);
  return encoder;
}

async function count(encoder: Encoder, ...texts: string[]): Promise<number> {
  const counter = new TokenCounter(encoder);
  counter.addFixed(3);
  for (const text of texts) {
    counter.add(text);
  }
  return counter.total();
}

/** Linux: the niceness of each thread of this process, by thread id (field 19 of /proc/self/task/<tid>/stat). */
function threadNiceness(): Map<number, number> {
  const niceness = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    // The fields after the command name in parentheses, starting with the state (field 3).
    niceness.set(Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
  }
  return niceness;
}

async function waitFor(condition: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition() && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

afterEach(async () => {
  await Promise.all(encoders.map((encoder) => encoder.close()));
  encoders = [];
  warnings = [];
});

const text = 'The gateway counts tokens on a thread of its own. '.repeat(8);
const rough = 3 + Math.ceil(text.length / ROUGH_CHARS_PER_TOKEN);

describe('the encoder thread', () => {
  it('starts on the first job, exits after its idle time, and starts again for the next', async () => {
    const encoder = makeEncoder({ idleMs: 100 });
    expect(encoder.threads()).toBe(0);
    const exact = await count(encoder, text);
    expect(exact).not.toBe(rough);
    expect(encoder.threads()).toBe(1);
    await waitFor(() => encoder.threads() === 0, 5_000);
    expect(encoder.threads()).toBe(0);
    expect(await count(encoder, text)).toBe(exact);
    expect(warnings).toEqual([]);
  });

  it('gives the rough estimate, once warned, when the thread dies, and serves the next job on a new one', async () => {
    const encoder = makeEncoder({ entry: dyingEntry });
    expect(await count(encoder, text)).toBe(rough);
    expect(await encoder.run('split', { text: 'héllo 👍🏽!' }, () => ['fallback'])).toEqual(['fallback']);
    expect(warnings).toHaveLength(1); // the second failure within the interval is only counted
    expect(warnings[0].details).toMatchObject({ job: 'countBatch' });
    expect(warnings[0].message).toMatch(/rough estimates/);
  });

  it('gives the rough estimate when a job outlives the timeout', async () => {
    // No start-up allowance: the thread's start-up alone outlives the millisecond.
    const encoder = makeEncoder({ jobTimeoutMs: 1, startupMs: 0 });
    expect(await count(encoder, text)).toBe(rough);
    expect(warnings[0].details).toMatchObject({ job: 'countBatch', reason: expect.stringMatching(/longer than 1 ms/) });
  });

  it('gives the rough estimate instead of a 429 when too many counts wait', async () => {
    // One count may wait: the second, asked for in the same turn, finds the queue full.
    const encoder = makeEncoder({ queueLimit: 1 });
    const [first, second] = await Promise.all([count(encoder, text), count(encoder, text)]);
    expect(first).not.toBe(rough);
    expect(second).toBe(rough);
    expect(warnings[0].details).toMatchObject({ reason: expect.stringMatching(/1 counts are waiting/) });
  });

  it('sends the counts asked for in one turn as one job, up to the batch cap', async () => {
    const encoder = makeEncoder({ entry: batchSizeEntry });
    const fallback = () => ({ countedTokens: -1, countedChars: 0, estimatedChars: 0 });
    const of = (chars: number) => encoder.count({ texts: ['x'.repeat(chars)], budgetChars: chars }, fallback);
    const sizes = async (counts: Array<Promise<{ countedTokens: number }>>) =>
      (await Promise.all(counts)).map((output) => output.countedTokens);

    expect(await sizes([of(10), of(10), of(10)])).toEqual([3, 3, 3]);
    expect(await sizes([of(10)])).toEqual([1]);
    // Two halves of the cap fit one job; one char more each, and they go one by one.
    expect(await sizes([of(ENCODER_BATCH_CHARS / 2), of(ENCODER_BATCH_CHARS / 2)])).toEqual([2, 2]);
    expect(await sizes([of(ENCODER_BATCH_CHARS / 2 + 1), of(ENCODER_BATCH_CHARS / 2 + 1)])).toEqual([1, 1]);
    expect(warnings).toEqual([]);
  });

  it.runIf(process.platform === 'linux')('runs below the main thread, which keeps its priority', async () => {
    const before = threadNiceness();
    const encoder = makeEncoder();
    await count(encoder, text);
    const started = [...threadNiceness()].filter(([tid]) => !before.has(tid));

    expect(started.filter(([, nice]) => nice === BACKGROUND_NICENESS)).toHaveLength(1);
    expect(threadNiceness().get(process.pid)).toBe(before.get(process.pid));
    expect(before.get(process.pid)).toBeLessThan(BACKGROUND_NICENESS);
  });

  it('gives the rough estimate when closed under a running job, and starts a new thread after', async () => {
    const encoder = makeEncoder();
    const running = count(encoder, 'A'.repeat(400_000));
    await waitFor(() => encoder.threads() === 1, 5_000);
    await encoder.close();
    expect(await running).toBe(3 + 100_000);
    expect(await count(encoder, text)).not.toBe(rough);
  });
});
