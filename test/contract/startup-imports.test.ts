/**
 * What the started process loads on its main thread: none of the heavy media libraries. sharp (with libvips,
 * ~26 MiB of RSS), exifr, file-type, resvg, html-to-text and unpdf belong to the engines, which load them in
 * the media pool's workers on first use; a static import of one of them anywhere the server reaches at start
 * (as `image_understanding` once imported sharp for its built-in analysis) costs every gateway that memory
 * whether or not it ever touches an image; the o200k tokenizer (~45 MiB) lives in its own thread too; the MCP SDK (~5 MiB) waits for the first MCP request;
 * prom-client and OpenTelemetry are loaded only when metrics or traces are configured. The real
 * `dist/main.js` is started with loader hooks that record every module its main thread resolves
 * (test/helpers/record-imports.mjs).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { dataDir, killServers, startServer } from '../helpers/spawn-server.js';

/**
 * The packages only engine workers may load, as they appear in a resolved URL, and those the main thread loads on
 * first use only (the MCP SDK, with the first /v1/mcp request: routes/mcp.ts).
 */
const WORKER_ONLY_PACKAGES = [
  'sharp',
  '@img',
  'exifr',
  'file-type',
  '@resvg/resvg-js',
  'html-to-text',
  'unpdf',
  'gpt-tokenizer',
];
/** The price table's package loads on the first price lookup of an upstream model, none of which this server has. */
const FIRST_USE_PACKAGES = ['@modelcontextprotocol', '@pydantic/genai-prices'];
/**
 * Loaded only when configured (main.ts imports them dynamically): prom-client with metrics on (an admin key or a
 * metrics port), OpenTelemetry with OTEL_EXPORTER_OTLP_ENDPOINT, the Redis client with OMNIGATE_REDIS_URL. The server
 * below has none of them.
 */
const CONFIGURED_ONLY_PACKAGES = ['prom-client', '@opentelemetry', 'ioredis'];

afterEach(() => killServers());

describe('the started server', () => {
  it('loads no image or document library, not the MCP SDK, and neither metrics nor tracing libraries when they are off, on its main thread', {
    timeout: 120_000,
  }, async () => {
    const dir = dataDir();
    const log = path.join(dir, 'imports.log');
    const server = await startServer(
      { OMNIGATE_DATA_DIR: dir, OMNIGATE_API_KEYS: 'sk-test-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', RECORD_IMPORTS_TO: log },
      ['./test/helpers/record-imports.mjs'],
    );
    const health = await fetch(`http://127.0.0.1:${server.port}/health`);
    expect(health.status).toBe(200);
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });

    const packages = new Set(
      readFileSync(log, 'utf8')
        .split('\n')
        .flatMap((url) => [...url.matchAll(/\/node_modules\/((?:@[^/]+\/)?[^/]+)\//g)].map((match) => match[1])),
    );
    // The recorder saw the server's own dependencies, so an empty list below means something.
    expect(packages).toContain('express');
    expect(packages).toContain('better-sqlite3');
    const loaded = [...packages].filter((name) =>
      [...WORKER_ONLY_PACKAGES, ...FIRST_USE_PACKAGES, ...CONFIGURED_ONLY_PACKAGES].some(
        (heavy) => name === heavy || name.startsWith(`${heavy}/`),
      ),
    );
    expect(loaded).toEqual([]);
  });
});
