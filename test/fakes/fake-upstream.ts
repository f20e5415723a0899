/**
 * The one fake upstream every test uses, whatever the provider flavour: a node:http server on 127.0.0.1,
 * port 0, that records every request and answers through a handler the test chooses (recorded fixtures
 * replayed in awkward pieces, stalls, error statuses, scripted models). OpenAI-compatible and Anthropic
 * fakes differ only in how their answers are written (see `answers.ts`), not in the server.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** The body as received, for byte-for-byte checks of what was forwarded. */
  text: string;
  /** The same bytes undecoded: binary uploads (multipart file parts) do not survive UTF-8 decoding. */
  raw: Buffer;
  /** The body parsed as JSON; undefined when empty or not JSON. */
  body: unknown;
  /** The client's port: equal for two requests when the connection was kept alive and reused. */
  remotePort: number | undefined;
}

export type FakeHandler = (request: RecordedRequest, res: ServerResponse, req: IncomingMessage) => void | Promise<void>;

export interface FakeUpstream {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  requests: RecordedRequest[];
  /** TCP connections accepted so far. */
  readonly connections: number;
  /** Replaces the answer for the next requests. */
  handle(handler: FakeHandler): void;
  /** Resolves when a socket whose request reached the server has closed. */
  socketClosed(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A handler that answers by path (the query left out), as a server with several endpoints does: the media
 * endpoints beside the files their answers point at. Unknown paths get a 404 with an OpenAI error body.
 */
export function byPath(routes: Record<string, FakeHandler>): FakeHandler {
  return (request, res, req) => {
    const route = routes[request.url.split('?')[0]!];
    if (!route) {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: `no route ${request.url}` } }));
      return;
    }
    return route(request, res, req);
  };
}

function parseJson(text: string): unknown {
  try {
    return text ? (JSON.parse(text) as unknown) : undefined;
  } catch {
    return undefined;
  }
}

/** Until a handler is given, every request gets a bare 500, so a test that forgot to script one fails loudly. */
export async function startFakeUpstream(initial?: FakeHandler): Promise<FakeUpstream> {
  let handler: FakeHandler =
    initial ??
    ((_request, res) => {
      res.writeHead(500).end();
    });
  const requests: RecordedRequest[] = [];
  const closeWaiters: Array<() => void> = [];
  let connections = 0;
  const server = createServer((req, res) => {
    const pieces: Buffer[] = [];
    req.on('data', (piece: Buffer) => pieces.push(piece));
    req.on('end', () => {
      const raw = Buffer.concat(pieces);
      const text = raw.toString('utf8');
      const request: RecordedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        text,
        raw,
        body: parseJson(text),
        remotePort: req.socket.remotePort,
      };
      requests.push(request);
      // A handler that throws answers 500 with its message instead of crashing the test run from a server callback.
      const fail = (error: unknown) => {
        if (!res.headersSent) {
          res.writeHead(500, { 'content-type': 'application/json' });
        }
        res.end(JSON.stringify({ error: { message: String(error) } }));
      };
      try {
        Promise.resolve(handler(request, res, req)).catch(fail);
      } catch (error) {
        fail(error);
      }
    });
  });
  // One listener per socket (not per request): kept-alive sockets serve many requests.
  server.on('connection', (socket) => {
    connections += 1;
    socket.once('close', () => closeWaiters.splice(0).forEach((resolve) => resolve()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    get connections() {
      return connections;
    },
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
