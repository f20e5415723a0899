/**
 * Video tasks survive the process: the real server is killed with SIGKILL mid-render and started again on the
 * same data directory, and the task completes with a playable MP4 (no partial file is ever served: content is
 * 409 until the task completes). SIGTERM with a short grace period hands a running task back to the queue,
 * exits 0, and the next start completes it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mp4Summary } from '../helpers/mp4-boxes.js';
import { dataDir, killServers, startServer, type Started } from '../helpers/spawn-server.js';

const KEY = 'og-video-durability-test-key-0123456789';
afterEach(() => killServers());

async function call(server: Started, method: string, path: string, body?: object) {
  const response = await fetch(`http://127.0.0.1:${server.port}${path}`, {
    method,
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
  const bytes = new Uint8Array(await response.arrayBuffer());
  const type = response.headers.get('content-type') ?? '';
  return {
    status: response.status,
    bytes,
    json: type.includes('json') ? (JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>) : undefined,
  };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) {
      return value;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const env = (dir: string, extra: Record<string, string> = {}) => ({
  OMNIGATE_DATA_DIR: dir,
  OMNIGATE_API_KEYS: KEY,
  OMNIGATE_VIDEO_LEASE_MS: '2000',
  ...extra,
});
// Long enough that a kill lands mid-render on any machine, short enough to finish quickly after.
const LONG_TASK = {
  model: 'local:video',
  prompt: 'waves under a night sky full of stars',
  seconds: '12',
  size: '1280x720',
};

describe('video tasks across process deaths', () => {
  it('completes a task after kill -9 mid-render, on the same data directory', { timeout: 180_000 }, async () => {
    const dir = dataDir();
    const first = await startServer(env(dir));
    const created = await call(first, 'POST', '/v1/videos', LONG_TASK);
    expect(created.status).toBe(202);
    const id = created.json!.id as string;
    await until(
      'rendering to start',
      async () => {
        const task = await call(first, 'GET', `/v1/videos/${id}`);
        return task.json!.status === 'processing' && (task.json!.progress as number) > 0 ? true : undefined;
      },
      60_000,
    );
    const early = await call(first, 'GET', `/v1/videos/${id}/content`);
    expect(early.status).toBe(409);
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');

    const second = await startServer(env(dir));
    const done = await until(
      'completion after the restart',
      async () => {
        const task = await call(second, 'GET', `/v1/videos/${id}`);
        return task.json!.status === 'completed' || task.json!.status === 'failed' ? task.json! : undefined;
      },
      150_000,
    );
    expect(done).toMatchObject({ status: 'completed', progress: 100, error: null });
    const content = await call(second, 'GET', `/v1/videos/${id}/content`);
    expect(content.status).toBe(200);
    const summary = mp4Summary(content.bytes);
    expect(summary.moovBeforeMdat).toBe(true);
    expect(summary.seconds).toBeCloseTo(12, 0);
    expect(summary.video).toMatchObject({ codec: 'avc1', width: 1280, height: 720 });
    // The log reaches stdout through a buffer flushed every 100 ms (server/logger.ts): wait for the line.
    const takeover = await until(
      'the completion log line',
      async () => second.logs().find((line) => line.msg === 'video completed' && line.videoId === id),
      5_000,
    );
    expect(takeover.attempt).toBe(2);
  });

  it('hands a running task back on SIGTERM after the grace period, exits 0, and completes it on the next start', {
    timeout: 180_000,
  }, async () => {
    const dir = dataDir();
    const first = await startServer(env(dir, { OMNIGATE_SHUTDOWN_GRACE_MS: '300' }));
    const created = await call(first, 'POST', '/v1/videos', LONG_TASK);
    const id = created.json!.id as string;
    await until(
      'rendering to start',
      async () => ((await call(first, 'GET', `/v1/videos/${id}`)).json!.status === 'processing' ? true : undefined),
      60_000,
    );
    first.child.kill('SIGTERM');
    expect((await first.exited).code).toBe(0);
    expect(
      first.logs().some((line) => line.msg === 'video handed back to the queue at shutdown' && line.videoId === id),
    ).toBe(true);

    const second = await startServer(env(dir));
    const task = await call(second, 'GET', `/v1/videos/${id}`);
    expect(['queued', 'processing']).toContain(task.json!.status);
    const done = await until(
      'completion',
      async () => {
        const now = await call(second, 'GET', `/v1/videos/${id}`);
        return now.json!.status === 'completed' || now.json!.status === 'failed' ? now.json! : undefined;
      },
      150_000,
    );
    expect(done.status).toBe('completed');
    // The hand-back refunded its attempt: the next start's run is attempt 1 again, not a retry.
    const completed = await until(
      'the completion log line',
      async () => second.logs().find((line) => line.msg === 'video completed' && line.videoId === id),
      5_000,
    );
    expect(completed.attempt).toBe(1);
  });
});
