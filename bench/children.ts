/**
 * The processes of `npm run bench` and `npm run soak`: the fake upstream, the bare Express floor and the gateway
 * (`dist/main.js`, compiled as `npm start` runs it; the bench's own helpers run from source under tsx), each
 * started on a free loopback port, pinned to a core, and ready once /health answers.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';

/**
 * On two or more cores the servers under test run on core 0 and the load generator (this process) and the fake
 * upstream on core 1, as the shared perf kit does, so the load generator never steals the gateway's CPU.
 */
export const PIN = availableParallelism() >= 2 && spawnSync('taskset', ['-V']).status === 0;
export const SERVER_CORE = '0';
export const LOAD_CORE = '1';
export const KEY = 'bench-key-0123456789';

export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

export interface ChildServer {
  port: number;
  pid: number;
  stop: () => Promise<void>;
}

export async function startChild(
  script: string,
  port: number,
  env: Record<string, string>,
  core = SERVER_CORE,
  /** Where the script runs from (another checkout's build, for a before/after comparison). */
  cwd?: string,
): Promise<ChildServer> {
  const command = PIN ? 'taskset' : process.execPath;
  // The gateway runs compiled, as `npm start` runs it; the bench's own helpers run from source.
  const loader = script.endsWith('.ts') ? ['--import', 'tsx'] : [];
  const args = [...(PIN ? ['-c', core, process.execPath] : []), ...loader, script];
  const child = spawn(command, args, {
    cwd,
    env: { ...process.env, PORT: String(port), ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  // A child that ends before it is stopped says so: a bench that then fails to connect names the cause.
  let stopping = false;
  child.once('exit', (code, signal) => {
    if (!stopping) {
      console.error(`${script} (pid ${child.pid}) exited early: code ${code}, signal ${signal}`);
    }
  });
  // Up to a minute: on a loaded machine a gateway may take 20 s to listen.
  for (let attempt = 0; attempt < 600; attempt++) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/health`);
      if (response.ok) {
        break;
      }
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    port,
    pid: child.pid!,
    stop: () =>
      new Promise((resolve) => {
        stopping = true;
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/**
 * The gateway (`dist/main.js`) with a fresh data folder, routing `bench-model` (alias `bench`) to the fake upstream
 * on `upstreamPort` with as many connections as the perf kit's candidate; `env` adds to its environment.
 */
export async function startGateway(
  upstreamPort: number,
  env: Record<string, string> = {},
  /** The `models:` entries (YAML, indented two spaces); providers `fake` and `fake2` both reach the upstream. */
  models = '  - provider: fake\n    model: bench-model\n    aliases: [bench]\n',
  /** YAML appended to the configuration file (limits, prices). */
  extraConfig = '',
  /** Another checkout whose `dist/main.js` runs instead of this one's. */
  cwd?: string,
): Promise<ChildServer> {
  const dir = mkdtempSync(path.join(tmpdir(), 'omnigate-bench-'));
  const configFile = path.join(dir, 'config.yaml');
  const provider = (id: string) =>
    `  ${id}:\n    type: openai-compatible\n    base_url: http://127.0.0.1:${upstreamPort}/v1\n    api_key: upstream-secret\n    max_connections: 1024\n`;
  writeFileSync(configFile, `providers:\n${provider('fake')}${provider('fake2')}models:\n${models}${extraConfig}`);
  return startChild(
    'dist/main.js',
    await freePort(),
    {
      OMNIGATE_DATA_DIR: dir,
      OMNIGATE_API_KEYS: KEY,
      OMNIGATE_CONFIG: configFile,
      ...env,
    },
    SERVER_CORE,
    cwd,
  );
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}
