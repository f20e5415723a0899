/**
 * Whether an upstream's base URL takes TCP connections, for the readiness check. A connection that opens is
 * enough: an HTTP request would need the provider's key and spend its quota, and any HTTP answer (even 401)
 * would mean the same thing.
 */
import { connect } from 'node:net';

/** null when a connection to the URL's host and port opens within `timeoutMs`, else why not. */
export function tcpProblem(baseUrl: string, timeoutMs = 2_000): Promise<string | null> {
  const url = new URL(baseUrl);
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (problem: string | null) => {
      socket.destroy();
      resolve(problem);
    };
    socket.setTimeout(timeoutMs, () => done(`no connection to ${host}:${port} within ${timeoutMs} ms`));
    socket.once('connect', () => done(null));
    socket.once('error', (error: NodeJS.ErrnoException) =>
      done(`cannot connect to ${host}:${port} (${error.code ?? error.message})`),
    );
  });
}
