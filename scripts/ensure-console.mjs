// Builds the web console (console/ → console/dist, served at /console) when it is missing or older than its
// sources, so `npm start` right after `npm install` serves the current console without a separate step.
// Vite is a dev dependency: where it is absent (a production install), the start goes on and /console says
// how to build it, as the docs do.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const consoleRoot = path.join(root, 'console');
const built = path.join(consoleRoot, 'dist', 'index.html');
const vite = path.join(root, 'node_modules', 'vite', 'bin', 'vite.js');

function newest(entry) {
  const stat = statSync(entry);
  if (!stat.isDirectory()) {
    return stat.mtimeMs;
  }
  return Math.max(0, ...readdirSync(entry).map((name) => newest(path.join(entry, name))));
}

export function consoleStale() {
  if (!existsSync(built)) {
    return true;
  }
  const inputs = [
    path.join(consoleRoot, 'src'),
    path.join(consoleRoot, 'index.html'),
    path.join(consoleRoot, 'vite.config.ts'),
    path.join(root, 'package-lock.json'),
  ].filter(existsSync);
  return Math.max(...inputs.map(newest)) > statSync(built).mtimeMs;
}

export function buildConsole() {
  execFileSync(process.execPath, [vite, 'build', consoleRoot], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Builds the console when stale; never fails the start (the console is not the API). */
export function ensureConsole() {
  if (!consoleStale()) {
    return;
  }
  if (!existsSync(vite)) {
    process.stderr.write('omnigate: the web console is not built and Vite is not installed; /console answers 404.\n');
    return;
  }
  try {
    buildConsole();
  } catch (error) {
    process.stderr.write(`${error.stdout ?? ''}${error.stderr ?? ''}`);
    process.stderr.write(
      'omnigate: building the web console failed; /console answers 404 until `npm run build` succeeds.\n',
    );
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  ensureConsole();
}
