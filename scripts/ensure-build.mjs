// Compiles server/ into dist/ (tsconfig.build.json) when the build is missing or any source is newer than it,
// so `npm start` and the `omnigate` command always run current code, compiled: running the sources through
// tsx costs ~12% of the request rate and a loader thread of ~30 MiB (bench/README.md). An unchanged tree is
// checked in a few milliseconds; a rebuild is incremental.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, utimesSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tokenRanksCurrent, writeTokenRanks } from './token-ranks.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const stamp = path.join(root, 'dist', '.tsbuildinfo');
const lock = path.join(root, 'dist.lock');
const inputs = ['tsconfig.json', 'tsconfig.build.json', 'package-lock.json'].map((name) => path.join(root, name));
/** Longer than any build: a lock this old was left by a build that was killed. */
const LOCK_STALE_MS = 120_000;
const LOCK_POLL_MS = 100;

function newestSource(directory) {
  let newest = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const file = path.join(directory, entry.name);
    if (entry.isDirectory()) {
      newest = Math.max(newest, newestSource(file));
    } else if (entry.name.endsWith('.ts')) {
      newest = Math.max(newest, statSync(file).mtimeMs);
    }
  }
  return newest;
}

function stale() {
  const builtAt = existsSync(stamp) ? statSync(stamp).mtimeMs : 0;
  const sources = [newestSource(path.join(root, 'server')), newestSource(path.join(root, 'generated'))];
  const settings = inputs.filter(existsSync).map((file) => statSync(file).mtimeMs);
  return !tokenRanksCurrent() || Math.max(...sources, ...settings) > builtAt;
}

function lockAge() {
  try {
    return Date.now() - statSync(lock).mtimeMs;
  } catch {
    return 0; // released meanwhile: try again
  }
}

/** One build at a time: two test files, or two starts, may find the build stale at once. */
async function withLock(work) {
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') {
        throw error;
      }
      if (lockAge() > LOCK_STALE_MS) {
        rmSync(lock, { recursive: true, force: true });
      } else {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, LOCK_POLL_MS);
      }
    }
  }
  try {
    return await work();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** Runs tsc, and saves the tokenizer's ranks when they are missing or from another version; returns tsc's output when it failed. */
async function build() {
  try {
    execFileSync(
      process.execPath,
      [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(root, 'tsconfig.build.json')],
      {
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
  } catch (error) {
    return `${error.stdout ?? ''}${error.stderr ?? ''}`;
  }
  if (!tokenRanksCurrent()) {
    await writeTokenRanks();
  }
  // tsc leaves its build info untouched when nothing changed; the stamp must say the check was made.
  const now = new Date();
  utimesSync(stamp, now, now);
  return undefined;
}

if (stale()) {
  const failure = await withLock(() => (stale() ? build() : undefined));
  if (failure !== undefined) {
    process.stdout.write(failure);
    process.stderr.write(
      'omnigate: compiling server/ into dist/ failed (the errors are above); fix them, or run the sources with `npm run dev`.\n',
    );
    process.exit(1);
  }
}
