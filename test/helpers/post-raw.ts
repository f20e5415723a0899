/**
 * One POST of raw bytes as a JSON body with an API key, over plain `node:http` (no client that would re-encode or
 * buffer the body differently): the large-body tests and benches send bodies of tens of MiB this way.
 */
import { request as httpRequest } from 'node:http';

export interface RawAnswer {
  status: number;
  text: string;
  /** The answer parsed as JSON, or its text when it is not JSON. */
  body: any;
  requestId: string | undefined;
}

export function postRaw(
  target: { port: number; key: string },
  path: string,
  body: Buffer,
  headers: Record<string, string | number> = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: target.port,
        path,
        method: 'POST',
        headers: {
          authorization: `Bearer ${target.key}`,
          'content-type': 'application/json',
          'content-length': body.length,
          ...headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // a non-JSON answer stays text
          }
          resolve({
            status: res.statusCode ?? 0,
            text,
            body: parsed,
            requestId: res.headers['x-request-id'] as string,
          });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
