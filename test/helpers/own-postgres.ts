/**
 * A PostgreSQL server of a test's own, for tests that stop and restart the database (never the machine's
 * shared one): `initdb` into a temporary directory, trust auth, listening on 127.0.0.1 at a free port with its
 * socket in that directory. PostgreSQL refuses to run as root, so under root the binaries run as the
 * `postgres` user (runuser) on a directory given to it.
 */
import { execFile } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port.js';

const run = promisify(execFile);
const BIN = process.env.OMNIGATE_TEST_POSTGRES_BIN ?? '/usr/lib/postgresql/15/bin';

export interface OwnPostgres {
  /** postgres://postgres@127.0.0.1:PORT/postgres */
  url: string;
  port: number;
  start(): Promise<void>;
  /** Stops the server at once (connections are cut). */
  stop(): Promise<void>;
  /** Stops the server and removes its directory. */
  destroy(): Promise<void>;
}

async function asPostgres(binary: string, args: string[]): Promise<void> {
  const root = process.getuid?.() === 0;
  await run(
    root ? 'runuser' : path.join(BIN, binary),
    root ? ['-u', 'postgres', '--', path.join(BIN, binary), ...args] : args,
    {
      timeout: 60_000,
    },
  );
}

export async function startOwnPostgres(): Promise<OwnPostgres> {
  const directory = mkdtempSync(path.join(tmpdir(), 'omnigate-own-pg-'));
  if (process.getuid?.() === 0) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: group } = await run('id', ['-g', 'postgres']);
    chownSync(directory, Number(stdout.trim()), Number(group.trim()));
  }
  const data = path.join(directory, 'data');
  const port = await freePort();
  await asPostgres('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  const options = `-p ${port} -k ${directory} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const own: OwnPostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async start() {
      await asPostgres('pg_ctl', ['-D', data, '-o', options, '-l', path.join(directory, 'log'), '-w', 'start']);
    },
    async stop() {
      await asPostgres('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
    },
    async destroy() {
      await own.stop().catch(() => {});
      rmSync(directory, { recursive: true, force: true });
    },
  };
  await own.start();
  return own;
}
