import { getEventListeners } from 'node:events';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../core/api-error.js';
import type { poolTestJobs } from '../../../test/fakes/pool-jobs-worker.js';
import { measureLoopHold, processCpuMs } from '../../../test/helpers/cpu-time.js';
import { createWorkerPool, type WorkerPool } from './worker-pool.js';

const entry = new URL('../../../test/fakes/pool-jobs-worker.ts', import.meta.url);
let pool: WorkerPool<typeof poolTestJobs> | undefined;

function makePool(overrides: Partial<Parameters<typeof createWorkerPool>[0]> = {}) {
  pool = createWorkerPool<typeof poolTestJobs>({ name: 'test', entry, size: 1, queueLimit: 1, jobTimeoutMs: 10_000, ...overrides });
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

describe('worker pool', () => {
  it('runs a job in a worker and hands its bytes back', async () => {
    const result = await makePool().use(never(), (slot) => slot.run('echo', { text: 'héllo' }));
    expect(result.text).toBe('héllo');
    expect(new TextDecoder().decode(result.bytes)).toBe('héllo');
  });

  it('hands the job’s progress reports to the caller, in order, before the result', async () => {
    const seen: number[] = [];
    const result = await makePool().use(never(), (slot) => slot.run('count', { to: 4 }, { onProgress: (percent) => seen.push(percent) }));
    expect(seen).toEqual([25, 50, 75, 100]);
    expect(result).toEqual({ counted: 4 });
  });

  it('keeps the event loop free while a job spins the CPU', async () => {
    // In CPU time, which a busy machine does not stretch: the job's 600 ms on this thread would be one hold.
    const { result, longestHoldMs, cpuMs } = await measureLoopHold(() => makePool().use(never(), (slot) => slot.run('spin', { ms: 600 })));
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

  it('stops a job that outlives the timeout with 504 and serves the next one on a fresh worker', async () => {
    // A fresh worker's start-up counts towards its first job's time: the timeout leaves room for it on a busy machine.
    const pool = makePool({ jobTimeoutMs: 3_000 });
    await pool.use(never(), (slot) => slot.run('echo', { text: 'warm' }));
    // The spin is 20 s of CPU time; stopped at the timeout, the process spends at most about 3 s of it, however
    // busy the machine is.
    const cpuBefore = processCpuMs();
    await expect(pool.use(never(), (slot) => slot.run('spin', { ms: 20_000 }))).rejects.toMatchObject({ status: 504, code: 'generation_timeout' });
    expect(processCpuMs() - cpuBefore).toBeLessThan(5_000);
    await expect(pool.use(never(), (slot) => slot.run('echo', { text: 'after' }))).resolves.toMatchObject({ text: 'after' });
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
    await expect(pool.use(never(), (slot) => slot.run('echo', { text: 'next' }))).resolves.toMatchObject({ text: 'next' });
    expect(processCpuMs() - cpuBefore).toBeLessThan(1_000);
  });

  it('leaves no listener on a caller signal that outlives its generations (one signal serves every count)', async () => {
    const pool = makePool();
    const shared = new AbortController();
    for (let i = 0; i < 5; i += 1) {
      await pool.use(shared.signal, (slot) => slot.run('echo', { text: String(i) }));
    }
    await expect(pool.use(shared.signal, () => Promise.reject(new Error('step failed')))).rejects.toThrow('step failed');
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
  });

  it('kills the child processes a stopped job named, which terminating its worker would leave running', async () => {
    const pool = makePool();
    const controller = new AbortController();
    let pid = 0;
    const job = pool.use(controller.signal, (slot) => slot.run('child', { ms: 5_000 }, { onProgress: (reported) => (pid = reported) }));
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
    await expect(pool.use(never(), (slot) => slot.run('refuse', { param: 'voice' }))).rejects.toMatchObject({ status: 400, code: 'bad_value', param: 'voice' });
    await expect(pool.use(never(), (slot) => slot.run('crash', undefined as never))).rejects.toMatchObject({ status: 500, code: 'engine_failed' });
    await expect(pool.use(never(), (slot) => slot.run('echo', { text: 'alive' }))).resolves.toMatchObject({ text: 'alive' });
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
