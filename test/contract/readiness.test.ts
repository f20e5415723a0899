/**
 * `GET /health/ready` of the started server flips with its dependencies: the default chat model's upstream
 * (a loopback server stopped and started again on the same port) and the SQLite database (its file moved away
 * and back), a PostgreSQL and a Redis of the test's own (stopped and started again; never the machine's shared
 * ones), and the deployments of a default chat model with several (failing only when none can be reached).
 * `GET /health` (liveness) stays 200 throughout.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startOwnPostgres, type OwnPostgres } from '../helpers/own-postgres.js';
import { type OwnRedis, redisServerInstalled, startOwnRedis } from '../helpers/own-redis.js';
import { postgresAvailable } from '../helpers/postgres.js';
import { dataDir, killServers, startServer } from '../helpers/spawn-server.js';

interface Readiness {
  status: string;
  checks: Array<{ name: string; status: string; detail: string | null }>;
}

let upstream: Server | undefined;
let ownPostgres: OwnPostgres | undefined;
let ownRedis: OwnRedis | undefined;
afterEach(async () => {
  killServers();
  upstream?.closeAllConnections();
  upstream?.close();
  await ownRedis?.stop();
  await ownPostgres?.destroy();
  ownRedis = undefined;
  ownPostgres = undefined;
});

/** GET /health/ready of a started server, and a poll until its status is the one asked (results live 2 s). */
function readinessOf(base: string) {
  const ready = async () => {
    const response = await fetch(`${base}/health/ready`);
    return { status: response.status, body: (await response.json()) as Readiness };
  };
  const until = async (status: number) => {
    let answer = await ready();
    for (let tries = 0; tries < 150 && answer.status !== status; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      answer = await ready();
    }
    return answer;
  };
  return { ready, until };
}

const check = (body: Readiness, name: string) => body.checks.find((entry) => entry.name === name);

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
    const { ready, until } = readinessOf(base);

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

  it('answers 503 naming PostgreSQL and Redis while each is down, 200 again once each is back', {
    timeout: 240_000,
  }, async (context) => {
    if (!redisServerInstalled || !(await postgresAvailable())) {
      if (process.env.CI) throw new Error('CI needs redis-server and PostgreSQL for this test');
      context.skip('no redis-server or PostgreSQL here');
      return;
    }
    ownPostgres = await startOwnPostgres();
    ownRedis = await startOwnRedis();
    const server = await startServer({
      OMNIGATE_DATA_DIR: dataDir(),
      OMNIGATE_API_KEYS: 'og-ready-test-key-aaaaaaaaaaaaaaaaaaaa',
      OMNIGATE_DATABASE_URL: ownPostgres.url,
      OMNIGATE_REDIS_URL: ownRedis.url,
    });
    const { until } = readinessOf(`http://127.0.0.1:${server.port}`);
    expect((await until(200)).body.checks).toEqual([
      { name: 'database', status: 'ok', detail: null },
      { name: 'redis', status: 'ok', detail: null },
    ]);

    await ownRedis.stop();
    const redisDown = await until(503);
    expect(check(redisDown.body, 'redis')).toMatchObject({
      status: 'failing',
      detail: expect.stringContaining(`127.0.0.1:${ownRedis.port}`),
    });
    expect(check(redisDown.body, 'database')?.status).toBe('ok');
    expect((await fetch(`http://127.0.0.1:${server.port}/health`)).status).toBe(200);
    await ownRedis.start();
    expect((await until(200)).body.status).toBe('ready');

    await ownPostgres.stop();
    const databaseDown = await until(503);
    expect(check(databaseDown.body, 'database')?.status).toBe('failing');
    expect(check(databaseDown.body, 'redis')?.status).toBe('ok');
    await ownPostgres.start();
    expect((await until(200)).body.checks.every((entry) => entry.status === 'ok')).toBe(true);
  });

  it('fails the default chat model only when none of its deployments can be reached', {
    timeout: 180_000,
  }, async () => {
    const first = createServer((_req, res) => res.writeHead(404).end());
    const second = createServer((_req, res) => res.writeHead(404).end());
    const [firstPort, secondPort] = [await listen(first, 0), await listen(second, 0)];
    upstream = second;
    const dir = dataDir();
    const config = path.join(dir, 'omnigate.yaml');
    writeFileSync(
      config,
      [
        'providers:',
        `  east: { type: openai-compatible, base_url: "http://127.0.0.1:${firstPort}/v1" }`,
        `  west: { type: openai-compatible, base_url: "http://127.0.0.1:${secondPort}/v1" }`,
        'models:',
        '  - id: pair',
        '    deployments:',
        '      - { provider: east, model: good }',
        '      - { provider: west, model: good }',
        'default_chat_model: pair',
        '',
      ].join('\n'),
    );
    const server = await startServer({
      OMNIGATE_DATA_DIR: dir,
      OMNIGATE_API_KEYS: 'og-ready-test-key-aaaaaaaaaaaaaaaaaaaa',
      OMNIGATE_CONFIG: config,
    });
    const { ready, until } = readinessOf(`http://127.0.0.1:${server.port}`);
    const [name] = (await ready()).body.checks.map((entry) => entry.name).filter((entry) => entry !== 'database');
    expect(name).toMatch(/^deployments:/);

    await new Promise<void>((resolve) => first.close(() => resolve()));
    // One deployment down: still ready. Wait out the 2 s reuse of the last result before judging.
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    const oneDown = await ready();
    expect(oneDown.status).toBe(200);
    expect(check(oneDown.body, name!)).toEqual({ name, status: 'ok', detail: null });

    await new Promise<void>((resolve) => {
      second.closeAllConnections();
      second.close(() => resolve());
    });
    const bothDown = await until(503);
    expect(check(bothDown.body, name!)).toMatchObject({
      status: 'failing',
      detail: expect.stringMatching(/no deployment reachable: east: .*ECONNREFUSED.*; west: .*ECONNREFUSED/),
    });
  });
});
