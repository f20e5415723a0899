/**
 * The HTTP server of an Express app, with requests and responses born with the app's prototypes.
 *
 * Express gives each request its prototypes itself: `Object.setPrototypeOf(req, app.request)` (and the same for
 * `res`) on objects Node has already built. V8 cannot share the resulting hidden class between requests, so every
 * request and response ends up with a map of its own, and each property access on them — in Node's HTTP code,
 * Express, the router, the validator and ours — misses V8's inline caches and takes the runtime's slow lookup,
 * request after request (about a fifth of the main thread at 1,000 req/s; bench/README.md, fifth pass).
 *
 * Here Node builds them from subclasses whose prototypes ARE `app.request` and `app.response` (the server's
 * `IncomingMessage` and `ServerResponse` options), so Express finds the prototype already set and changes
 * nothing, and all requests share their maps. The prototype chain is the one Express makes: the app's object
 * (holding `app`), then Express's request or response methods, then Node's.
 */
import { createServer, IncomingMessage, ServerResponse, type Server, type ServerOptions } from 'node:http';
import type { Express } from 'express';

/** Makes a subclass's `prototype` the app's prototype object: Express's methods beneath it, `app` on it. */
function adoptPrototype(prototype: object, expressPrototype: object, app: Express): void {
  Object.setPrototypeOf(prototype, expressPrototype);
  Object.defineProperty(prototype, 'app', { configurable: true, enumerable: true, writable: true, value: app });
}

export function createAppServer(app: Express, options: ServerOptions = {}): Server {
  class AppRequest extends IncomingMessage {}
  class AppResponse extends ServerResponse<AppRequest> {
    /** When the head was written (`performance.now()`): the metrics' time to first byte. A field, so every response keeps one map. */
    headAt: number | undefined = undefined;
  }
  // Node writes every head through writeHead (res.write and res.end without one call it via _implicitHeader).
  const writeHead = ServerResponse.prototype.writeHead as (this: AppResponse, ...args: unknown[]) => AppResponse;
  AppResponse.prototype.writeHead = function (this: AppResponse, ...args: unknown[]) {
    this.headAt ??= performance.now();
    return writeHead.apply(this, args);
  } as AppResponse['writeHead'];
  adoptPrototype(AppRequest.prototype, Object.getPrototypeOf(app.request) as object, app);
  adoptPrototype(AppResponse.prototype, Object.getPrototypeOf(app.response) as object, app);
  app.request = AppRequest.prototype as unknown as Express['request'];
  app.response = AppResponse.prototype as unknown as Express['response'];
  return createServer(
    { ...options, IncomingMessage: AppRequest, ServerResponse: AppResponse },
    app,
  ) as unknown as Server;
}
