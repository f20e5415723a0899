/**
 * The real process as `npm start` runs it (`dist/main.js`, the compiled build, brought up to date first by
 * the same scripts/ensure-build.mjs) for tests whose subject is process-level: started on port 0 with a
 * temporary data directory and only the environment a test gives it, stdout and stderr captured, JSON log
 * lines parsed.
 */
import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Starting the server checks the whole contract: allow for a slow, busy machine. */
const START_TIMEOUT_MS = 90_000;

let built = false;
/** Compiles server/ into dist/ if it is stale, once per test file (a no-op after `npm test`'s own build). */
function ensureBuild(): void {
  if (!built) {
    execFileSync(process.execPath, ['scripts/ensure-build.mjs'], { cwd: ROOT, stdio: 'inherit' });
    built = true;
  }
}

export interface Started {
  child: ChildProcessWithoutNullStreams;
  port: number;
  /** Everything written to stdout so far. */
  stdout(): string;
  stderr(): string;
  /** JSON log lines written so far. */
  logs(): Array<Record<string, unknown>>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const children: ChildProcessWithoutNullStreams[] = [];
/** Kills every server a test started and left running (call it in `afterEach`). */
export function killServers(): void {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
    }
  }
}

export function dataDir(): string {
  return mkdtempSync(path.join(tmpdir(), 'omnigate-process-'));
}

/** The parent's environment without any Omnigate setting, plus `overrides`. */
export function environment(overrides: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^(OMNIGATE_|PORT$|HOST$|LOG_LEVEL$)/.test(name)) {
      env[name] = value;
    }
  }
  return { ...env, PORT: '0', LOG_LEVEL: 'info', ...overrides };
}

/**
 * `preload`: modules for node's `--import` (a test's loader hooks). `command`: what node runs, `npm start`'s
 * `dist/main.js` by default (`['bin/omnigate.mjs', 'start', '--workers', '2']` runs the command a user types).
 */
export function spawnServer(
  overrides: Record<string, string>,
  preload: string[] = [],
  command: string[] = ['dist/main.js'],
): Omit<Started, 'port'> & { listening: Promise<number> } {
  ensureBuild();
  const imports = preload.flatMap((module) => ['--import', module]);
  const child = spawn(process.execPath, [...imports, ...command], { cwd: ROOT, env: environment(overrides) });
  children.push(child);
  let out = '';
  let err = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
  const logs = () =>
    out
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  const listening = new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no 'omnigate listening' line within ${START_TIMEOUT_MS} ms; stderr: ${err}`)),
      START_TIMEOUT_MS,
    );
    child.stdout.on('data', (piece: Buffer) => {
      out += piece.toString('utf8');
      const line = logs().find((entry) => entry.msg === 'omnigate listening');
      if (line) {
        clearTimeout(timer);
        resolve(line.port as number);
      }
    });
    child.stderr.on('data', (piece: Buffer) => {
      err += piece.toString('utf8');
    });
    void exited.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before listening; stderr: ${err}`));
    });
  });
  listening.catch(() => undefined);
  return { child, stdout: () => out, stderr: () => err, logs, exited, listening };
}

export async function startServer(
  overrides: Record<string, string>,
  preload: string[] = [],
  command?: string[],
): Promise<Started> {
  const spawned = spawnServer(overrides, preload, command);
  const port = await spawned.listening;
  return { ...spawned, port };
}
