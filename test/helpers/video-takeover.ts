/**
 * The video takeover both two-instance tests check (one SQLite file, one PostgreSQL database): a video created
 * on one instance, its renderer killed with SIGKILL mid-render, completed by the other (as a later attempt), and then the same bytes served by the survivor and a restarted instance.
 */
import { expect } from 'vitest';
import { eventually } from './child-processes.js';
import type { Instance } from './instances.js';
import { mp4Summary } from './mp4-boxes.js';

/** Creates the video on instances[0], kills whichever instance claimed it, and waits for the other to finish it. */
export async function killRendererMidVideo(
  instances: Instance[],
  key: string,
  claimantPid: (id: string) => number | undefined | Promise<number | undefined>,
  completeWithinMs: number,
): Promise<{ id: string; holder: Instance; survivor: Instance }> {
  const created = await instances[0].call('POST', '/v1/videos', {
    key,
    // Long enough that the kill lands mid-render on any machine (as in video-durability.test.ts).
    body: { model: 'local:video', prompt: 'waves under a night sky full of stars', seconds: '12', size: '1280x720' },
  });
  expect(created.status).toBe(202);
  const id = (created.json as { id: string }).id;
  // Either instance's runner may claim it: the claim names the process.
  let holder: Instance | undefined;
  expect(
    await eventually(async () => {
      const task = (await instances[1].call('GET', `/v1/videos/${id}`, { key })).json as { progress: number };
      const pid = await claimantPid(id);
      holder = instances.find((instance) => instance.server.child.pid === pid);
      return holder !== undefined && task.progress > 0;
    }, 120_000),
  ).toBe(true);
  const survivor = instances.find((instance) => instance !== holder)!;
  expect(await holder!.kill()).toEqual({ code: null, signal: 'SIGKILL' });
  expect(
    await eventually(async () => {
      const task = (await survivor.call('GET', `/v1/videos/${id}`, { key })).json as { status: string };
      return task.status === 'completed' || task.status === 'failed';
    }, completeWithinMs),
  ).toBe(true);
  expect((await survivor.call('GET', `/v1/videos/${id}`, { key })).json).toMatchObject({
    status: 'completed',
    progress: 100,
  });
  // The status is the row's; the log line is written just after it.
  const completed = (line: { msg?: unknown; videoId?: unknown }) =>
    line.msg === 'video completed' && line.videoId === id;
  expect(await eventually(() => survivor.server.logs().some(completed))).toBe(true);
  // A takeover is the task's second attempt at least; on a machine at load 17 the survivor's own short test lease
  // can lapse once more (it then notices and claims again), so a third is allowed.
  expect(survivor.server.logs().find(completed)?.attempt).toBeGreaterThanOrEqual(2);
  return { id, holder: holder!, survivor };
}

/** Both instances serve the video's content, the same 12-second MP4. */
export async function expectSameVideoFrom(instances: Instance[], id: string, key: string): Promise<void> {
  const bodies: Buffer[] = [];
  for (const instance of instances) {
    const response = await fetch(`http://127.0.0.1:${instance.port}/v1/videos/${id}/content`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(response.status).toBe(200);
    bodies.push(Buffer.from(await response.arrayBuffer()));
  }
  expect(bodies[0].equals(bodies[1])).toBe(true);
  expect(mp4Summary(new Uint8Array(bodies[0])).seconds).toBeCloseTo(12, 0);
}
