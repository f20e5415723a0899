/**
 * A redis-server of a test's own on a free loopback port, for tests that stop Redis and start it again (never
 * the machine's shared one): nothing on disk, stopped with SIGTERM, started again on the same port.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createConnection } from 'node:net';
import { freePort } from './free-port.js';

export interface OwnRedis {
  url: string;
  port: number;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Whether this machine has a redis-server binary to start. */
export const redisServerInstalled = spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;

/** Whether something accepts TCP connections on the port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const own: OwnRedis = {
    url: `redis://127.0.0.1:${port}`,
    port,
    async start() {
      child = spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
        {
          stdio: 'ignore',
        },
      );
      for (let attempt = 0; attempt < 200 && !(await listening(port)); attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async stop() {
      if (child && child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child!.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
  await own.start();
  return own;
}
