/**
 * A fuzz request and the plain node:http client that sends it byte for byte: supertest would normalise the
 * path (`..`), pick content types and re-encode bodies, which are exactly what the fuzz varies.
 */
import http from 'node:http';
import fc from 'fast-check';

export interface RawRequest {
  /** Which mutation made it, for the failure message. */
  kind: string;
  method: string;
  /** Path and query exactly as sent, `/v1/files/%00?limit=-1`. */
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/** A short, printable description: fast-check prints it as the counterexample instead of a 64 KiB body. */
export function describeRequest(req: RawRequest): string {
  const body = req.body ? req.body.toString('latin1') : '';
  const shown = body.length > 300 ? `${body.slice(0, 300)}… (${body.length} bytes)` : body;
  const path = req.path.length > 200 ? `${req.path.slice(0, 200)}… (${req.path.length} chars)` : req.path;
  const headers = Object.entries(req.headers)
    .filter(([name]) => name !== 'authorization')
    .map(([name, value]) => `${name}: ${value.slice(0, 120)}`);
  return `[${req.kind}] ${req.method} ${path}\n${headers.join('\n')}\n\n${JSON.stringify(shown)}`;
}

/** Gives a request the description above as its fast-check representation. */
export function printable(req: RawRequest): RawRequest {
  return Object.assign(req, { [fc.toStringMethod]: () => describeRequest(req) });
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/**
 * Sends `req` to `port` on 127.0.0.1; rejects when no complete answer arrives within `timeoutMs`. That is a hang
 * guard, not a speed limit: a valid speech or music request renders real audio, which on a loaded 2-core machine
 * beside the rest of the suite has taken over 10 s.
 */
export function sendRaw(port: number, req: RawRequest, timeoutMs = 60_000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const headers = { ...req.headers, ...(req.body ? { 'content-length': String(req.body.length) } : {}) };
    const outgoing = http.request(
      { host: '127.0.0.1', port, method: req.method, path: req.path, headers, agent },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    outgoing.setTimeout(timeoutMs, () => outgoing.destroy(new Error(`no complete answer within ${timeoutMs} ms`)));
    outgoing.on('error', reject);
    outgoing.end(req.body);
  });
}

export function closeAgent(): void {
  agent.destroy();
}
