/**
 * `omnigate start --workers N` as real processes: a primary and N servers on one port over one SQLite file, and
 * over one PostgreSQL database (OMNIGATE_DATABASE_URL).
 * Which process served a request is read from the access lines (each worker's lines carry its pid), and the
 * workers from the process tree (the primary's children) — no header outside the contract.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { childrenOf, eventually } from '../helpers/child-processes.js';
import { createTestDatabase, postgresAvailable } from '../helpers/postgres.js';
import { dataDir, environment, killServers, ROOT, spawnServer, startServer } from '../helpers/spawn-server.js';

const TEST_TIMEOUT_MS = 240_000;
const BIN = ['bin/omnigate.mjs', 'start'];
const CHAT = { model: 'local:chat', messages: [{ role: 'user', content: 'hello from a worker test' }] };

afterEach(() => {
  killServers();
});

/** One call on a fresh connection (no keep-alive), so the primary hands each to a worker afresh. */
function chat(port: number, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        agent: false,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(CHAT));
  });
}

function keysCli(dir: string, ...argv: string[]): Promise<string> {
  return keysCliWith({ OMNIGATE_DATA_DIR: dir }, ...argv);
}

function keysCliWith(env: Record<string, string>, ...argv: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['bin/omnigate.mjs', 'keys', ...argv],
      { cwd: ROOT, env: environment(env) },
      (error, stdout) => (error ? reject(error) : resolve(stdout)),
    );
  });
}

function usageCount(dir: string): number {
  const db = new Database(path.join(dir, 'omnigate.sqlite'), { readonly: true });
  try {
    return (db.prepare('SELECT COUNT(*) AS n FROM usage_records').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

describe('omnigate start --workers', () => {
  it(
    'serves from two worker processes on one port, accepts a key made by the CLI, and loses no usage record on SIGTERM',
    async () => {
      const dir = dataDir();
      const server = await startServer({ OMNIGATE_DATA_DIR: dir }, [], [...BIN, '--workers', '2']);
      const listening = server.logs().find((line) => line.msg === 'omnigate listening');
      expect(listening).toMatchObject({ workers: 2, port: server.port });
      const pids = (listening?.pids as number[]).slice().sort();
      // The workers are the primary's children (node:cluster forks them), one per slot.
      expect((await childrenOf(server.child.pid!)).sort()).toEqual(pids);
      expect(pids).toHaveLength(2);
      // The primary made the first-start key once, not once per worker.
      expect(server.stdout().match(/^ {2}og-[A-Za-z0-9_-]{32}$/gm)).toHaveLength(1);

      const created = await keysCli(dir, 'create', '--name', 'from-cli');
      const key = /og-[A-Za-z0-9_-]{32}/.exec(created)?.[0];
      expect(key).toBeDefined();
      const calls = 24;
      const statuses = await Promise.all(Array.from({ length: calls }, () => chat(server.port, key!)));
      expect(statuses).toEqual(Array(calls).fill(200));
      // Every worker served some of them: the access lines name the process that wrote them.
      await eventually(() => server.logs().filter((line) => line.msg === 'request').length >= calls);
      const servedBy = new Set(
        server
          .logs()
          .filter((line) => line.msg === 'request' && line.path === '/v1/chat/completions')
          .map((line) => line.pid),
      );
      expect([...servedBy].sort()).toEqual(pids);

      server.child.kill('SIGTERM');
      expect(await server.exited).toEqual({ code: 0, signal: null });
      const stopped = server.logs().filter((line) => line.msg === 'stopped');
      // Both workers drained and flushed, then the primary ended.
      expect(stopped.map((line) => line.pid ?? 'primary').sort()).toEqual([...pids, 'primary'].sort());
      expect(await childrenOf(server.child.pid!)).toEqual([]);
      expect(usageCount(dir)).toBe(calls);

      // A restart on the same file (one process) finds them all, and the CLI's key still works.
      const again = await startServer({ OMNIGATE_DATA_DIR: dir });
      expect(await chat(again.port, key!)).toBe(200);
      again.child.kill('SIGTERM');
      expect(await again.exited).toEqual({ code: 0, signal: null });
      expect(usageCount(dir)).toBe(calls + 1);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'replaces a worker that was killed, and keeps serving',
    async () => {
      const dir = dataDir();
      const key = 'og-workers-test-Hq7Zp2Lx9Vr4Nc8Tb1Md6Kw3';
      const server = await startServer({ OMNIGATE_DATA_DIR: dir, OMNIGATE_WORKERS: '2', OMNIGATE_API_KEYS: key });
      const [victim, survivor] = (await childrenOf(server.child.pid!)).sort();
      process.kill(victim, 'SIGKILL');
      let replacement: number | undefined;
      expect(
        await eventually(async () => {
          const now = await childrenOf(server.child.pid!);
          replacement = now.find((pid) => pid !== survivor && pid !== victim);
          return now.length === 2 && replacement !== undefined;
        }, 120_000),
      ).toBe(true);
      expect(server.logs().find((line) => line.msg === 'worker exited; starting another')).toMatchObject({
        pid: victim,
        signal: 'SIGKILL',
      });
      // The new worker listens (its own line), then serves beside the survivor.
      expect(
        await eventually(
          () => server.logs().some((line) => line.msg === 'worker listening' && line.pid === replacement),
          120_000,
        ),
      ).toBe(true);
      const statuses = await Promise.all(Array.from({ length: 8 }, () => chat(server.port, key)));
      expect(statuses).toEqual(Array(8).fill(200));
      server.child.kill('SIGTERM');
      expect(await server.exited).toEqual({ code: 0, signal: null });
      expect(usageCount(dir)).toBe(8);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'stops the start when the workers cannot: 1 for a taken port, 78 for a refused configuration; 2 or 78 for a bad --workers',
    async () => {
      const taken: Server = createServer();
      await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
      const port = (taken.address() as { port: number }).port;
      try {
        const spawned = spawnServer({ OMNIGATE_DATA_DIR: dataDir(), PORT: String(port), OMNIGATE_WORKERS: '2' });
        expect(await spawned.exited).toEqual({ code: 1, signal: null });
        expect(spawned.stderr()).toContain(`omnigate: cannot listen on 127.0.0.1:${port}: EADDRINUSE`);
      } finally {
        taken.close();
      }
      // A configuration only the registry refuses fails in the workers: the start stops with their code.
      const dir = dataDir();
      const file = path.join(dir, 'omnigate.yaml');
      writeFileSync(file, 'aliases:\n  fast: local:chatt\n');
      const refused = spawnServer({ OMNIGATE_DATA_DIR: dir, OMNIGATE_CONFIG: file, OMNIGATE_WORKERS: '2' });
      expect(await refused.exited).toEqual({ code: 78, signal: null });
      expect(refused.stderr()).toContain(
        `omnigate: configuration error: ${file}: aliases.fast: unknown model 'local:chatt'`,
      );
      const malformed = spawnServer({ OMNIGATE_DATA_DIR: dataDir() }, [], [...BIN, '--workers']);
      expect(await malformed.exited).toEqual({ code: 2, signal: null });
      expect(malformed.stderr()).toContain('omnigate start [--workers N|auto]');
      const invalid = spawnServer({ OMNIGATE_DATA_DIR: dataDir() }, [], [...BIN, '--workers', 'many']);
      expect(await invalid.exited).toEqual({ code: 78, signal: null });
      expect(invalid.stderr()).toContain("OMNIGATE_WORKERS must be 'auto' or an integer from 1 to 256, got 'many'");
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'on PostgreSQL: two workers serve one port over one database, and a key revoked is refused by both',
    async (context) => {
      if (!(await postgresAvailable())) {
        context.skip('no PostgreSQL server');
      }
      const database = await createTestDatabase();
      try {
        const dir = dataDir();
        const env = { OMNIGATE_DATA_DIR: dir, OMNIGATE_DATABASE_URL: database.url };
        const server = await startServer(env, [], [...BIN, '--workers', '2']);
        const pids = ((await childrenOf(server.child.pid!)) as number[]).sort();
        expect(pids).toHaveLength(2);
        const created = await keysCliWith(env, 'create', '--name', 'pg-workers');
        const key = /og-[A-Za-z0-9_-]{32}/.exec(created)![0];
        const keyId = /key_[0-9a-f]+/.exec(created)![0];
        const statuses = await Promise.all(Array.from({ length: 16 }, () => chat(server.port, key)));
        expect(statuses).toEqual(Array(16).fill(200));
        const servedBy = (status: number) =>
          new Set(
            server
              .logs()
              .filter(
                (line) => line.msg === 'request' && line.path === '/v1/chat/completions' && line.status === status,
              )
              .map((line) => line.pid),
          );
        await eventually(() => servedBy(200).size === 2);
        expect([...servedBy(200)].sort()).toEqual(pids);

        // Revoked through the CLI: each worker hears it (LISTEN/NOTIFY) and refuses it; calls go on until both have.
        await keysCliWith(env, 'revoke', keyId);
        expect(
          await eventually(async () => {
            const answers = await Promise.all(Array.from({ length: 4 }, () => chat(server.port, key)));
            return answers.every((status) => status === 401) && servedBy(401).size === 2;
          }, 30_000),
        ).toBe(true);
        expect([...servedBy(401)].sort()).toEqual(pids);
        server.child.kill('SIGTERM');
        expect(await server.exited).toEqual({ code: 0, signal: null });
        const client = new pg.Client({ connectionString: database.url });
        await client.connect();
        try {
          const { rows } = await client.query<{ n: number }>(
            'SELECT COUNT(*)::int AS n FROM usage_records WHERE status = 200',
          );
          expect(rows[0].n).toBe(16);
        } finally {
          await client.end();
        }
      } finally {
        await database.drop();
      }
    },
    TEST_TIMEOUT_MS,
  );
});
