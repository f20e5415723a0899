/**
 * Test support: a fake Anthropic API on 127.0.0.1 (port 0) that records every request and answers with a
 * handler the test chooses, plus helpers that replay `__fixtures__` files, SSE ones in small byte pieces.
 */
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export type FakeHandler = (request: RecordedRequest, res: ServerResponse, req: IncomingMessage) => void | Promise<void>;

export interface FakeUpstream {
  url: string;
  requests: RecordedRequest[];
  /** TCP connections accepted so far. */
  readonly connections: number;
  handle(handler: FakeHandler): void;
  close(): Promise<void>;
}

export function fixture(name: string): string {
  return readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), 'utf8');
}

export async function startFakeUpstream(): Promise<FakeUpstream> {
  const requests: RecordedRequest[] = [];
  let handler: FakeHandler = (_request, res) => {
    res.writeHead(500).end();
  };
  let connections = 0;
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) {
      chunks.push(chunk as Buffer);
    }
    const request: RecordedRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
    requests.push(request);
    await handler(request, res, req);
  });
  server.on('connection', () => {
    connections += 1;
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get connections() {
      return connections;
    },
    handle(next) {
      handler = next;
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

export function sendJson(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': 'req_fake_1', ...headers });
  res.end(text);
}

/** Writes `text` as SSE in pieces of `pieceBytes` bytes (cutting through UTF-8 characters and lines). */
export async function sendSse(res: ServerResponse, text: string, pieceBytes = 0): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'request-id': 'req_fake_2', 'anthropic-ratelimit-requests-remaining': '49' });
  const bytes = Buffer.from(text, 'utf8');
  const size = pieceBytes > 0 ? pieceBytes : bytes.length;
  for (let offset = 0; offset < bytes.length; offset += size) {
    res.write(bytes.subarray(offset, offset + size));
    await new Promise((resolve) => setImmediate(resolve));
  }
  res.end();
}
