import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { cacheValidatorRouteRegexps } from './validator-route-cache.js';

type Compiled = { regexp: RegExp; keys: Array<{ name: string }> };
const requireFromValidator = createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'));
const pathToRegexpModule = requireFromValidator('path-to-regexp') as { pathToRegexp: (path: string, options?: object) => Compiled };

describe('cacheValidatorRouteRegexps', () => {
  it('compiles a path template once per set of options, and the compiled route still matches', () => {
    cacheValidatorRouteRegexps();
    cacheValidatorRouteRegexps(); // a second app in the same process must not wrap the wrapper
    const first = pathToRegexpModule.pathToRegexp('/v1/responses/:response_id', { sensitive: false, strict: false });
    const again = pathToRegexpModule.pathToRegexp('/v1/responses/:response_id', { sensitive: false, strict: false });
    expect(again).toBe(first);
    expect(first.regexp.exec('/v1/responses/resp_1')?.[1]).toBe('resp_1');
    expect(first.regexp.exec('/v1/responses/resp_2')?.[1]).toBe('resp_2');
    expect(first.keys.map((key) => key.name)).toEqual(['response_id']);
  });

  it('keeps templates compiled with different options apart', () => {
    cacheValidatorRouteRegexps();
    const insensitive = pathToRegexpModule.pathToRegexp('/v1/models', { sensitive: false });
    const sensitive = pathToRegexpModule.pathToRegexp('/v1/models', { sensitive: true });
    expect(sensitive).not.toBe(insensitive);
    expect(insensitive.regexp.test('/V1/MODELS')).toBe(true);
    expect(sensitive.regexp.test('/V1/MODELS')).toBe(false);
  });
});
