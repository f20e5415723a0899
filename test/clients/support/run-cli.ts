/**
 * Runs a client CLI as a child process in its own process group, with a minimal environment (nothing of
 * the caller's leaks in: no real keys, no real HOME), and kills the whole group when the time is up.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const CLIENTS_DIR = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
export const BIN_DIR = path.join(CLIENTS_DIR, 'node_modules', '.bin');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  ms: number;
}

export interface CliOptions {
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
}

/** The PATH a child gets: the clients' bin directory, node's own directory and the system's. */
export function childPath(): string {
  return [
    BIN_DIR,
    path.dirname(process.execPath),
    '/usr/local/sbin',
    '/usr/local/bin',
    '/usr/sbin',
    '/usr/bin',
    '/sbin',
    '/bin',
  ].join(':');
}

export function runCli(command: string, args: string[], options: CliOptions): Promise<CliResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { PATH: childPath(), LANG: 'C.UTF-8', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // its own process group, so a timeout kills its children too
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8').on('data', (piece: string) => (stdout += piece));
    child.stderr.setEncoding('utf8').on('data', (piece: string) => (stderr += piece));
    const killGroup = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      killGroup(); // leftovers (helpers the CLI started) go with it
      resolve({ code, signal, stdout, stderr, timedOut, ms: Date.now() - started });
    });
  });
}

/** A fresh temporary directory, removed by the returned function. */
export function tempDir(prefix: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), `omnigate-${prefix}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A readable summary for assertion messages. */
export function describeRun(result: CliResult): string {
  return `exit=${result.code} signal=${result.signal} timedOut=${result.timedOut} ms=${result.ms}\n--- stdout ---\n${result.stdout.slice(-4000)}\n--- stderr ---\n${result.stderr.slice(-4000)}`;
}
