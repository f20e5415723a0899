/**
 * express-openapi-validator finds the operation of every request in its metadata middleware (`lookupRoute`
 * in its `openapi.metadata.js`): for each of the contract's paths in turn it builds a route pair, reads two
 * app settings, allocates the options and compiles the path template into a regular expression with
 * path-to-regexp's `pathToRegexp`, until one matches. With our 28 paths that scan was the validator's largest
 * cost per request (~5% of the gateway's CPU on chat JSON passthrough, where the reference app has one path).
 * Two shortcuts, neither changing what is found:
 *
 * 1. The compile is memoised: its result depends only on the template and the options. The memo wraps the
 *    `pathToRegexp` export of the very path-to-regexp module the validator loads (resolved from the
 *    validator's own folder); the validator reads the export at each call, so it sees the wrapper. Express's
 *    router uses that module's `match`, which is left alone. Only the contract's templates (and the server
 *    base paths) are compiled, never a request's path, so the memo cannot grow with traffic. The compiled
 *    `{ regexp, keys }` is shared; its callers only read it, and `regexp` has no `g`/`y` flag, so `exec`
 *    keeps no state between calls.
 * 2. The route is found first by a scan of precompiled expressions in the validator's own order, and the
 *    validator's middleware then runs over a context holding only that route (made once per route), so its
 *    `lookupRoute` looks at one path instead of all of them. The first match of the same expressions in the
 *    same order is what the full scan would have returned. A request no route matches goes to the
 *    validator's unchanged middleware, which answers it as before (404 for a managed path, or passes it on).
 *
 * Both patch the installed express-openapi-validator 5.6 (pinned in package.json); the tests in
 * validator-route-cache.test.ts fail if an upgrade moves what they rely on.
 */
import { createRequire } from 'node:module';
import type { Request, RequestHandler } from 'express';

type PathToRegexp = (path: unknown, options?: Record<string, unknown>) => unknown;
type Compiled = { regexp: RegExp };
type RouteMap = Record<string, unknown>;
interface OpenApiContextLike {
  expressRouteMap: RouteMap;
  useRequestUrl?: boolean;
}
type MetadataFactory = (this: unknown, context: OpenApiContextLike, responseApiDoc: unknown) => RequestHandler;

const patched = new WeakSet<object>();

function memoiseCompile(pathToRegexpModule: { pathToRegexp: PathToRegexp }): void {
  const compile = pathToRegexpModule.pathToRegexp;
  const compiled = new Map<string, unknown>();
  pathToRegexpModule.pathToRegexp = (path, options) => {
    if (typeof path !== 'string') {
      return compile(path, options);
    }
    // Every option path-to-regexp 8 reads, so two calls that could compile differently never share a key.
    const key = `${path}\0${options?.sensitive}\0${options?.end}\0${options?.trailing}\0${options?.delimiter}`;
    let result = compiled.get(key);
    if (result === undefined) {
      result = compile(path, options);
      compiled.set(key, result);
    }
    return result;
  };
}

function findRouteFirst(prototype: { metadataMiddleware: MetadataFactory }, pathToRegexp: PathToRegexp): void {
  const metadataMiddleware = prototype.metadataMiddleware;
  prototype.metadataMiddleware = function (context, responseApiDoc) {
    const everyRoute = metadataMiddleware.call(this, context, responseApiDoc);
    const routes = Object.keys(context.expressRouteMap);
    const oneRoute = new Map<string, RequestHandler>();
    const middlewareFor = (route: string): RequestHandler => {
      let middleware = oneRoute.get(route);
      if (!middleware) {
        const narrowed = Object.create(context) as OpenApiContextLike;
        narrowed.expressRouteMap = { [route]: context.expressRouteMap[route] };
        middleware = metadataMiddleware.call(this, narrowed, responseApiDoc);
        oneRoute.set(route, middleware);
      }
      return middleware;
    };
    // The expressions of every route, per combination of the two app settings lookupRoute passes.
    const expressions = new Map<string, RegExp[]>();
    const matching = (req: Request): string | undefined => {
      // What lookupRoute matches against, with the options it passes (see its source).
      // split always returns at least one part.
      const path = (context.useRequestUrl ? req.url : req.originalUrl).split('?')[0]!;
      const sensitive = req.app.enabled('case sensitive routing');
      const strict = req.app.enabled('strict routing');
      const settings = `${sensitive}${strict}`;
      let compiled = expressions.get(settings);
      if (!compiled) {
        compiled = routes.map((route) => (pathToRegexp(route, { sensitive, strict }) as Compiled).regexp);
        expressions.set(settings, compiled);
      }
      const index = compiled.findIndex((expression) => expression.test(path));
      return index === -1 ? undefined : routes[index];
    };
    return (req, res, next) => {
      const route = matching(req);
      return (route === undefined ? everyRoute : middlewareFor(route))(req, res, next);
    };
  };
}

export function cacheValidatorRouteRegexps(): void {
  const requireFromValidator = createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'));
  const pathToRegexpModule = requireFromValidator('path-to-regexp') as { pathToRegexp: PathToRegexp };
  if (patched.has(pathToRegexpModule)) {
    return;
  }
  memoiseCompile(pathToRegexpModule);
  const validatorModule = requireFromValidator('./openapi.validator.js') as {
    OpenApiValidator: { prototype: { metadataMiddleware: MetadataFactory } };
  };
  findRouteFirst(validatorModule.OpenApiValidator.prototype, pathToRegexpModule.pathToRegexp);
  patched.add(pathToRegexpModule);
}
