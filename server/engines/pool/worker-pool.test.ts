import { getEventListeners } from 'node:events';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../core/api-error.js';
import { type poolTestJobs, SLOW_START_MS } from '../../../test/fakes/pool-jobs-worker-jobs.js';
import { measureLoopHold, processCpuMs } from '../../../test/helpers/cpu-time.js';
import { createWorkerPool, type WorkerPool } from './worker-pool.js';

const entry = new URL('../../../test/fakes/pool-jobs-worker.ts', import.meta.url);
let pool: WorkerPool<typeof poolTestJobs> | undefined;

function makePool(overrides: Partial<Parameters<typeof createWorkerPool>[0]> = {}) {
  pool = createWorkerPool<typeof poolTestJobs>({
    name: 'test',
    entry,
    size: 1,
    queueLimit: 1,
    jobTimeoutMs: 10_000,
    ...overrides,
  });
  return pool;
}

afterEach(async () => {
  await pool?.close();
  pool = undefined;
});

/** Whether a process runs (a zombie, killed but not yet reaped, counts as gone). */
function isAlive(pid: number): boolean {
  const stat = (() => {
    try {
      return readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      return '';
    }
  })();
  return stat !== '' && !/^\d+ \(.*\) Z/.test(stat);
}

const never = () => new AbortController().signal;

/** Holds a job in its slot until the test opens it, so queue order is set by the test and not by timing. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('worker pool', () => {
  it.runIf(process.platform === 'linux')(
    'runs its workers at the niceness it is given (a background pool gives way), and at the process’s otherwise',
    async () => {
      const own = (await makePool().use(never(), (slot) => slot.run('niceness', {}))).niceness;
      await pool?.close();
      const background = await makePool({ niceness: 19 }).use(never(), (slot) => slot.run('niceness', {}));
      // Lowering a thread's own priority needs no privilege; the other workers keep the process's.
      expect(own).not.toBe(19);
      expect(background.niceness).toBe(19);
    },
  );

  it('runs a job in a worker and hands its bytes back', async () => {
    const result = await makePool().use(never(), (slot) => slot.run('echo', { text: 'héllo' }));
    expect(result.text).toBe('héllo');
    expect(new TextDecoder().decode(result.bytes)).toBe('héllo');
  });

  it('hands the ArrayBuffers named in `transfer` to the worker instead of copying them', async () => {
    const pool = makePool();
    const kept = new ArrayBuffer(1024);
    const moved = new ArrayBuffer(1024);
    await pool.use(never(), (slot) => slot.run('echo', { text: 'a', kept } as never));
    await pool.use(never(), (slot) => slot.run('echo', { text: 'b', moved } as never, { transfer: [moved] }));
    expect(kept.byteLength).toBe(1024);
    expect(moved.byteLength).toBe(0); // detached: it now belongs to the worker
  });

  it('hands the job’s progress reports to the caller, in order, before the result', async () => {
    const seen: number[] = [];
    const result = await makePool().use(never(), (slot) =>
      slot.run('count', { to: 4 }, { onProgress: (percent) => seen.push(percent) }),
    );
    expect(seen).toEqual([25, 50, 75, 100]);
    expect(result).toEqual({ counted: 4 });
  });

  it('keeps the event loop free while a job spins the CPU', async () => {
    // In CPU time, which a busy machine does not stretch: the job's 600 ms on this thread would be one hold.
    const { result, longestHoldMs, cpuMs } = await measureLoopHold(() =>
      makePool().use(never(), (slot) => slot.run('spin', { ms: 600 })),
    );
    expect(result).toEqual({ spun: 600 });
    expect(cpuMs).toBeGreaterThanOrEqual(600);
    expect(longestHoldMs).toBeLessThan(100);
  });

  it('refuses a caller beyond the queue with 429 and a Retry-After', async () => {
    const pool = makePool({ size: 1, queueLimit: 1 });
    const first = pool.use(never(), (slot) => slot.run('spin', { ms: 400 }));
    const second = pool.use(never(), (slot) => slot.run('echo', { text: 'queued' }));
    const third = pool.use(never(), (slot) => slot.run('echo', { text: 'refused' }));
    await expect(third).rejects.toMatchObject({ status: 429, code: 'engine_busy' });
    const refusal = (await third.catch((error: ApiError) => error)) as ApiError;
    expect(Number(refusal.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(pool.stats().queued).toBe(1);
    await expect(first).resolves.toEqual({ spun: 400 });
    await expect(second).resolves.toMatchObject({ text: 'queued' });
  });

  it('serves owners round-robin: a key with one job waits behind at most one job of each flooding key', async () => {
    const pool = makePool({ size: 1, queueLimit: 100 });
    const starts: string[] = [];
    const held = gate();
    const job = (owner: string, label: string, hold?: Promise<void>) =>
      pool.use(
        never(),
        async (slot) => {
          starts.push(label);
          await hold;
          return slot.run('echo', { text: label });
        },
        { owner },
      );
    const jobs = [job('a', 'a0', held.opened)];
    for (let index = 1; index <= 5; index += 1) {
      jobs.push(job('a', `a${index}`));
    }
    for (let index = 0; index < 5; index += 1) {
      jobs.push(job('c', `c${index}`));
    }
    jobs.push(job('b', 'b0'));
    expect(pool.stats()).toMatchObject({ busy: 1, queued: 11, owners: 3 });
    held.open();
    await Promise.all(jobs);
    // b0 queued last, behind ten jobs, yet starts after the running a0 and one job each of a and c.
    expect(starts).toEqual(['a0', 'a1', 'c0', 'b0', 'a2', 'c1', 'a3', 'c2', 'a4', 'c3', 'a5', 'c4']);
  });

  it('refuses an owner past its cap of queued and running jobs with 429 and a Retry-After, while other owners still queue', async () => {
    const pool = makePool({ size: 1, queueLimit: 10, perOwnerLimit: 2 });
    const held = gate();
    const echo = (text: string, owner?: string, signal = never()) =>
      pool.use(signal, (slot) => slot.run('echo', { text }), { owner });
    const running = pool.use(
      never(),
      async (slot) => {
        await held.opened;
        return slot.run('echo', { text: 'a0' });
      },
      { owner: 'a' },
    );
    const leaving = new AbortController();
    const queued = echo('a1', 'a', leaving.signal);
    const refusal = await echo('a2', 'a').catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(ApiError);
    expect(refusal).toMatchObject({ status: 429, code: 'key_jobs_limit' });
    expect((refusal as ApiError).message).toContain(
      'This API key already has 2 test jobs queued or running, the most one key may have',
    );
    expect(Number((refusal as ApiError).headers['retry-after'])).toBeGreaterThanOrEqual(1);
    const others = [echo('b0', 'b'), echo('internal')];
    expect(pool.stats().queued).toBe(3);
    // A job whose caller left no longer counts against its owner.
    leaving.abort(new Error('left'));
    await expect(queued).rejects.toThrow('left');
    const again = echo('a3', 'a');
    await expect(echo('a4', 'a')).rejects.toMatchObject({ status: 429, code: 'key_jobs_limit' });
    held.open();
    await expect(Promise.all([running, again, ...others])).resolves.toMatchObject([
      { text: 'a0' },
      { text: 'a3' },
      { text: 'b0' },
      { text: 'internal' },
    ]);
    // Finished jobs free the owner's count.
    await expect(Promise.all([echo('a5', 'a'), echo('a6', 'a')])).resolves.toHaveLength(2);
  });

  it('answers a job that outgrows the worker heap with 413 engine_out_of_memory and runs the next one on a fresh worker', async () => {
    const pool = makePool({ resourceLimits: { maxOldGenerationSizeMb: 48 } });
    const failure = await pool
      .use(never(), (slot) => slot.run('hog', undefined as never))
      .catch((error: unknown) => error);
    expect(failure).toMatchObject({ status: 413, code: 'engine_out_of_memory' });
    expect((failure as ApiError).message).toContain('needed more memory than a test worker may use (48 MB)');
    await expect(pool.use(never(), (slot) => slot.run('echo', { text: 'after' }))).resolves.toMatchObject({
      text: 'after',
    });
  });

  it('stops a job that outlives the timeout with 504 and serves the next one on a fresh worker', async () => {
    // A fresh worker's start-up counts towards its first job's time: the timeout leaves room for it on a busy machine.
    const pool = makePool({ jobTimeoutMs: 3_000 });
    await pool.use(never(), (slot) => slot.run('echo', { text: 'warm' }));
    // The spin is 20 s of CPU time; stopped at the timeout, the process spends at most about 3 s of it, however
    // busy the machine is.
    const cpuBefore = processCpuMs();
    await expect(pool.use(never(), (slot) => slot.run('spin', { ms: 20_000 }))).rejects.toMatchObject({
      status: 504,
      code: 'generation_timeout',
    });
    expect(processCpuMs() - cpuBefore).toBeLessThan(5_000);
    await expect(pool.use(never(), (slot) => slot.run('echo', { text: 'after' }))).resolves.toMatchObject({
      text: 'after',
    });
  });

  it('gives a job that starts its worker the start-up time on top of its own', async () => {
    const slowEntry = new URL('../../../test/fakes/pool-slow-start-worker.ts', import.meta.url);
    const jobTimeoutMs = SLOW_START_MS / 3;
    // Without the allowance the start-up alone outlives the job's timeout.
    await expect(
      makePool({ entry: slowEntry, jobTimeoutMs }).use(never(), (slot) => slot.run('echo', { text: 'cold' })),
    ).rejects.toMatchObject({ status: 504, code: 'generation_timeout' });
    await pool?.close();
    const warm = makePool({ entry: slowEntry, jobTimeoutMs, startupMs: 60_000 });
    await expect(warm.use(never(), (slot) => slot.run('echo', { text: 'cold' }))).resolves.toMatchObject({
      text: 'cold',
    });
    // The allowance is only for the job that starts the worker: on the running worker the job's own time applies.
    await expect(warm.use(never(), (slot) => slot.run('spin', { ms: jobTimeoutMs * 20 }))).rejects.toMatchObject({
      status: 504,
      code: 'generation_timeout',
    });
  });

  it('stops a running job when its caller goes away, and drops a queued one', async () => {
    const pool = makePool({ size: 1, queueLimit: 4 });
    const running = new AbortController();
    const waiting = new AbortController();
    const first = pool.use(running.signal, (slot) => slot.run('spin', { ms: 5_000 }));
    const second = pool.use(waiting.signal, (slot) => slot.run('echo', { text: 'never' }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    waiting.abort(new Error('left the queue'));
    await expect(second).rejects.toThrow('left the queue');
    expect(pool.stats().queued).toBe(0);
    // The spin is 5 s of CPU time: a worker left spinning would spend most of it before the one slot serves `next`.
    const cpuBefore = processCpuMs();
    running.abort(new Error('client disconnected'));
    await expect(first).rejects.toThrow('client disconnected');
    expect(pool.stats().busy).toBe(0);
    await expect(pool.use(never(), (slot) => slot.run('echo', { text: 'next' }))).resolves.toMatchObject({
      text: 'next',
    });
    expect(processCpuMs() - cpuBefore).toBeLessThan(1_000);
  });

  it('leaves no listener on a caller signal that outlives its generations (one signal serves every count)', async () => {
    const pool = makePool();
    const shared = new AbortController();
    for (let i = 0; i < 5; i += 1) {
      await pool.use(shared.signal, (slot) => slot.run('echo', { text: String(i) }));
    }
    await expect(pool.use(shared.signal, () => Promise.reject(new Error('step failed')))).rejects.toThrow(
      'step failed',
    );
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
  });

  it('kills the child processes a stopped job named, which terminating its worker would leave running', async () => {
    const pool = makePool();
    const controller = new AbortController();
    let pid = 0;
    const job = pool.use(controller.signal, (slot) =>
      slot.run('child', { ms: 5_000 }, { onProgress: (reported) => (pid = reported) }),
    );
    const deadline = Date.now() + 5_000;
    while (pid === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(isAlive(pid)).toBe(true);
    controller.abort(new Error('caller left'));
    await expect(job).rejects.toThrow('caller left');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(isAlive(pid)).toBe(false);
  });

  it('passes a job’s own 4xx through and turns a dead worker into a 500, then recovers', async () => {
    const pool = makePool();
    await expect(pool.use(never(), (slot) => slot.run('refuse', { param: 'voice' }))).rejects.toMatchObject({
      status: 400,
      code: 'bad_value',
      param: 'voice',
    });
    await expect(pool.use(never(), (slot) => slot.run('crash', undefined as never))).rejects.toMatchObject({
      status: 500,
      code: 'engine_failed',
    });
    await expect(pool.use(never(), (slot) => slot.run('echo', { text: 'alive' }))).resolves.toMatchObject({
      text: 'alive',
    });
  });

  it('lets idle workers exit and refuses new work after close', async () => {
    const pool = makePool({ idleMs: 50 });
    await pool.use(never(), (slot) => slot.run('echo', { text: 'x' }));
    expect(pool.stats().workers).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(pool.stats().workers).toBe(0);
    await pool.close();
    await expect(pool.use(never(), (slot) => slot.run('echo', { text: 'x' }))).rejects.toMatchObject({ status: 503 });
  });
});
