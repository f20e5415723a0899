/**
 * A fake OpenAI-compatible upstream for provider tests: a node:http server on 127.0.0.1, port 0, that
 * records every request and lets each test answer as it likes (fixtures replayed in awkward pieces,
 * stalls, error statuses). Test support only.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: unknown;
  /** The client's port: equal for two requests when the connection was kept alive and reused. */
  remotePort: number | undefined;
}

export type FakeHandler = (request: RecordedRequest, res: ServerResponse, req: IncomingMessage) => void | Promise<void>;

export interface FakeUpstream {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  requests: RecordedRequest[];
  /** Replaces the answer for the next requests. */
  handle(handler: FakeHandler): void;
  /** Resolves when a socket whose request reached the server has closed. */
  socketClosed(): Promise<void>;
  close(): Promise<void>;
}

export function fixture(name: string): string {
  return readFileSync(new URL(`./${name}`, import.meta.url), 'utf8');
}

/** Writes `text` in `size`-byte pieces, each in its own write, so boundaries fall anywhere (inside UTF-8 too). */
export async function writeInPieces(res: ServerResponse, text: string, size = 7): Promise<void> {
  const bytes = Buffer.from(text, 'utf8');
  for (let at = 0; at < bytes.length; at += size) {
    res.write(bytes.subarray(at, at + size));
    await new Promise((resolve) => setImmediate(resolve));
  }
}

export function sseHead(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
}

export async function startFakeUpstream(initial?: FakeHandler): Promise<FakeUpstream> {
  let handler: FakeHandler = initial ?? ((_request, res) => {
    res.writeHead(500).end();
  });
  const requests: RecordedRequest[] = [];
  const closeWaiters: Array<() => void> = [];
  const server = createServer((req, res) => {
    const pieces: Buffer[] = [];
    req.on('data', (piece: Buffer) => pieces.push(piece));
    req.on('end', () => {
      const text = Buffer.concat(pieces).toString('utf8');
      const request: RecordedRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: text ? JSON.parse(text) : undefined, remotePort: req.socket.remotePort };
      requests.push(request);
      void handler(request, res, req);
    });
  });
  // One listener per socket (not per request): kept-alive sockets serve many requests.
  server.on('connection', (socket) => socket.once('close', () => closeWaiters.splice(0).forEach((resolve) => resolve())));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    handle(next) {
      handler = next;
    },
    socketClosed: () => new Promise<void>((resolve) => closeWaiters.push(resolve)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
