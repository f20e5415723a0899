/**
 * `OMNIGATE_METRICS_PORT`: a second listener that serves `GET /metrics` (and HEAD) without authentication and
 * nothing else, for a scraper on a network the operator keeps private. Plain node:http: none of the API's
 * middleware, keys or usage records.
 */
import { createServer, type Server } from 'node:http';

export function startMetricsServer(
  metrics: { render(): Promise<string>; contentType: string },
  listen: { port: number; host: string },
  onListening: (port: number) => void,
  onError: (error: NodeJS.ErrnoException) => void,
): Server {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res
        .writeHead(404, { 'content-type': 'text/plain; charset=utf-8' })
        .end('Only GET /metrics is served on this port.\n');
      return;
    }
    metrics.render().then(
      (text) =>
        res.writeHead(200, { 'content-type': metrics.contentType }).end(req.method === 'HEAD' ? undefined : text),
      () => res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('Collecting metrics failed.\n'),
    );
  });
  server.once('error', onError);
  server.listen(listen.port, listen.host, () => {
    const address = server.address();
    onListening(typeof address === 'object' && address ? address.port : listen.port);
  });
  return server;
}
