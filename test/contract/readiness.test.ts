/**
 * `GET /health/ready` of the started server flips with its dependencies: the default chat model's upstream
 * (a loopback server stopped and started again on the same port) and the SQLite database (its file moved away
 * and back). `GET /health` (liveness) stays 200 throughout. PostgreSQL and Redis are no backends of Omnigate
 * yet, so there is nothing of theirs to check.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { dataDir, killServers, startServer } from '../helpers/spawn-server.js';

interface Readiness {
  status: string;
  checks: Array<{ name: string; status: string; detail: string | null }>;
}

let upstream: Server | undefined;
afterEach(() => {
  killServers();
  upstream?.closeAllConnections();
  upstream?.close();
});

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve) =>
    server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );
}

describe('GET /health/ready', () => {
  it('answers 503 naming the upstream while it is down and the database while its file is gone, 200 again after', {
    timeout: 180_000,
  }, async () => {
    upstream = createServer((_req, res) => res.writeHead(404).end());
    const port = await listen(upstream, 0);
    const dir = dataDir();
    const config = path.join(dir, 'omnigate.yaml');
    writeFileSync(
      config,
      `providers:\n  up:\n    type: openai-compatible\n    base_url: http://127.0.0.1:${port}/v1\nmodels:\n  - { provider: up, model: good }\ndefault_chat_model: up:good\n`,
    );
    const server = await startServer({
      OMNIGATE_DATA_DIR: dir,
      OMNIGATE_API_KEYS: 'og-ready-test-key-aaaaaaaaaaaaaaaaaaaa',
      OMNIGATE_CONFIG: config,
    });
    const base = `http://127.0.0.1:${server.port}`;
    const ready = async () => {
      const response = await fetch(`${base}/health/ready`);
      return { status: response.status, body: (await response.json()) as Readiness };
    };
    /** Polls until the answer's status is `status` (results are reused for 2 s). */
    const until = async (status: number) => {
      let answer = await ready();
      for (let tries = 0; tries < 100 && answer.status !== status; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        answer = await ready();
      }
      return answer;
    };
    const check = (body: Readiness, name: string) => body.checks.find((entry) => entry.name === name);

    const first = await ready();
    expect(first.status).toBe(200);
    expect(first.body.status).toBe('ready');
    expect(first.body.checks).toEqual([
      { name: 'database', status: 'ok', detail: null },
      { name: 'upstream:up', status: 'ok', detail: null },
    ]);

    await new Promise<void>((resolve) => {
      upstream!.closeAllConnections();
      upstream!.close(() => resolve());
    });
    const down = await until(503);
    expect(down.status).toBe(503);
    expect(down.body.status).toBe('not_ready');
    expect(check(down.body, 'upstream:up')).toMatchObject({
      status: 'failing',
      detail: expect.stringContaining('ECONNREFUSED'),
    });
    expect(check(down.body, 'database')).toEqual({ name: 'database', status: 'ok', detail: null });
    expect((await fetch(`${base}/health`)).status).toBe(200);

    upstream = createServer((_req, res) => res.writeHead(404).end());
    await listen(upstream, port);
    expect((await until(200)).body.status).toBe('ready');

    const database = path.join(dir, 'omnigate.sqlite');
    renameSync(database, `${database}.away`);
    const gone = await until(503);
    expect(gone.status).toBe(503);
    expect(check(gone.body, 'database')).toMatchObject({
      status: 'failing',
      detail: expect.stringContaining('is gone'),
    });
    expect(check(gone.body, 'upstream:up')?.status).toBe('ok');
    expect((await fetch(`${base}/health`)).status).toBe(200);

    renameSync(`${database}.away`, database);
    expect((await until(200)).body.checks.every((entry) => entry.status === 'ok')).toBe(true);
  });

  it('has no upstream check when the default chat model is the built-in one', { timeout: 180_000 }, async () => {
    const server = await startServer({
      OMNIGATE_DATA_DIR: dataDir(),
      OMNIGATE_API_KEYS: 'og-ready-test-key-aaaaaaaaaaaaaaaaaaaa',
    });
    const response = await fetch(`http://127.0.0.1:${server.port}/health/ready`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      status: 'ready',
      checks: [{ name: 'database', status: 'ok', detail: null }],
    });
  });
});
