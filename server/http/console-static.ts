/**
 * The web console's files (`console/`, built by Vite into `console/dist/`), served at `/console` by the gateway
 * itself. The console is no operation of the contract: it is mounted before authentication and the validator,
 * like the docs redirects, and it calls the public API with the key the user signs in with, as any client does.
 *
 * The files are read once, on the first `/console` request (a gateway nobody browses reads nothing), and kept in
 * memory with their gzip form. Vite names every asset by its content hash, so `/console/assets/*` is cached for a
 * year as immutable; the page itself is revalidated on each load. Every answer carries a strict
 * Content-Security-Policy: scripts and styles from this origin only (the build inlines none), media from this
 * origin, blob: and data: (generated images, audio and video fetched with the key), no framing.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { RequestHandler, Response } from 'express';

export const CONSOLE_PATH = '/console';

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob: data:",
  "media-src 'self' blob: data:",
  "connect-src 'self'",
  "font-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};
/** Below this size gzip saves too little to be worth a second copy. */
const GZIP_MIN_BYTES = 1024;

interface ConsoleFile {
  body: Buffer;
  gzip?: Buffer;
  type: string;
  immutable: boolean;
}

function readBuild(directory: string): Map<string, ConsoleFile> {
  const files = new Map<string, ConsoleFile>();
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const file = path.join(folder, entry.name);
      if (entry.isDirectory()) {
        walk(file);
        continue;
      }
      const type = TYPES[path.extname(entry.name)];
      if (!type || !statSync(file).isFile()) {
        continue;
      }
      const body = readFileSync(file);
      const name = path.relative(directory, file).split(path.sep).join('/');
      files.set(name, {
        body,
        gzip: body.length >= GZIP_MIN_BYTES && !type.startsWith('image/png') ? gzipSync(body, { level: 9 }) : undefined,
        type,
        immutable: name.startsWith('assets/'),
      });
    }
  };
  walk(directory);
  return files;
}

function send(req: Parameters<RequestHandler>[0], res: Response, file: ConsoleFile): void {
  res.setHeader('content-type', file.type);
  res.setHeader(
    'cache-control',
    file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache', // no-cache: revalidate, then reuse
  );
  res.setHeader('vary', 'accept-encoding');
  const gzip = file.gzip && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
  if (gzip) {
    res.setHeader('content-encoding', 'gzip');
  }
  const body = gzip ? file.gzip! : file.body;
  res.setHeader('content-length', body.length);
  res.status(200).end(body);
}

function securityHeaders(res: Response): void {
  res.setHeader('content-security-policy', CONSOLE_CSP);
  res.setHeader('x-content-type-options', 'nosniff');
  res.setHeader('referrer-policy', 'no-referrer');
  res.setHeader('x-frame-options', 'DENY');
  res.setHeader('cross-origin-opener-policy', 'same-origin');
}

/**
 * `directory`: the built console (`console/dist`), or undefined when it was not built, in which case `/console`
 * says how to build it. The page routes by the URL's hash (`/console#/usage`), so every path below `/console`
 * that is no file of the build is a plain 404.
 */
export function consoleStatic(directory: string | undefined): RequestHandler {
  let files: Map<string, ConsoleFile> | undefined;
  return (req, res, next) => {
    if (req.path !== CONSOLE_PATH && !req.path.startsWith(`${CONSOLE_PATH}/`)) {
      next();
      return;
    }
    securityHeaders(res);
    // requestStart has made HEAD a GET already; Node omits the body of a HEAD answer.
    if (req.method !== 'GET') {
      res.setHeader('allow', 'GET, HEAD');
      res.status(405).type('text/plain').send('Method not allowed: the console is read with GET.\n');
      return;
    }
    if (!directory) {
      res
        .status(404)
        .type('text/plain')
        .send('The web console has not been built: run `npm run build` (or `npm start`, which builds it).\n');
      return;
    }
    files ??= readBuild(directory);
    const name = req.path === CONSOLE_PATH || req.path === `${CONSOLE_PATH}/` ? 'index.html' : req.path.slice(9);
    const file = files.get(name);
    if (!file) {
      res.status(404).type('text/plain').send('Not found in the web console.\n');
      return;
    }
    send(req, res, file);
  };
}
