/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance` 0.1.12, the newest that runs on Node 20)
 * against `/v1/mcp`: the server scenarios that apply to a stateless, tools-only server. The rest of the suite
 * needs its own test tools, resources, prompts or sessions, which a gateway does not offer. The suite's CLI
 * cannot send headers, so a loopback proxy adds the bearer key, as any client of ours would.
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type StartedServer } from './start-server.js';

const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'];
const cli = path.join(
  path.dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/package.json')),
  'dist/index.js',
);

let started: StartedServer;
let proxy: http.Server;
let url: string;

beforeAll(async () => {
  started = await startServer();
  proxy = http.createServer((req, res) => {
    const target = new URL(req.url ?? '/', started.baseURL);
    const forwarded = http.request(
      target,
      { method: req.method, headers: { ...req.headers, host: target.host, authorization: `Bearer ${started.key}` } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forwarded.on('error', () => res.destroy());
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/v1/mcp`;
});

afterAll(async () => {
  proxy?.close();
  await started?.close();
});

describe('MCP conformance suite', () => {
  it.each(SCENARIOS)('%s passes every check', async (scenario) => {
    const { code, output } = await new Promise<{ code: number; output: string }>((resolve) => {
      execFile(
        process.execPath,
        [cli, 'server', '--url', url, '--scenario', scenario],
        { timeout: 60_000 },
        (error, stdout, stderr) => {
          resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, output: `${stdout}${stderr}` });
        },
      );
    });
    expect(code, output).toBe(0);
    const summary = /Passed: (\d+)\/(\d+), (\d+) failed/.exec(output);
    expect(summary, output).not.toBeNull();
    expect(Number(summary![1])).toBeGreaterThan(0);
    expect(summary![1], output).toBe(summary![2]);
    expect(summary![3]).toBe('0');
  });
});
