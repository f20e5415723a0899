/**
 * express-openapi-validator finds the operation of every request by compiling each of the contract's paths
 * into a regular expression with path-to-regexp's `pathToRegexp`, on every request, one path after another
 * until one matches (`lookupRoute` in its `openapi.metadata.js`). That compile was the validator's largest
 * cost per request (~5% of the gateway's CPU on chat JSON passthrough). The result depends only on the path
 * template and the options, so it is compiled once here and reused.
 *
 * The memo wraps the `pathToRegexp` export of the very path-to-regexp module the validator loads (resolved
 * from the validator's own folder); the validator reads the export at each call, so it sees the wrapper.
 * Express's router uses that module's `match`, which is left alone. Only the contract's path templates
 * (and the server base paths) are ever compiled, never a request's path, so the memo cannot grow with
 * traffic. The compiled `{ regexp, keys }` is shared; its callers only read it, and `regexp` has no `g`/`y`
 * flag, so `exec` keeps no state between calls.
 */
import { createRequire } from 'node:module';

type PathToRegexp = (path: unknown, options?: Record<string, unknown>) => unknown;

const patched = new WeakSet<object>();

export function cacheValidatorRouteRegexps(): void {
  const requireFromValidator = createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'));
  const pathToRegexpModule = requireFromValidator('path-to-regexp') as { pathToRegexp: PathToRegexp };
  if (patched.has(pathToRegexpModule)) {
    return;
  }
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
  patched.add(pathToRegexpModule);
}
