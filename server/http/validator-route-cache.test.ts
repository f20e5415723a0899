import { createRequire } from 'node:module';
import express from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { cacheValidatorRouteRegexps } from './validator-route-cache.js';

type Compiled = { regexp: RegExp; keys: Array<{ name: string }> };
const requireFromValidator = createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'));
const pathToRegexpModule = requireFromValidator('path-to-regexp') as {
  pathToRegexp: (path: string, options?: object) => Compiled;
};

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

describe('finding the route before the validator looks it up', () => {
  const spec = {
    openapi: '3.1.0',
    info: { title: 'routes', version: '1' },
    paths: Object.fromEntries([
      ...Array.from({ length: 20 }, (_, index) => [
        `/v1/filler${index}`,
        { get: { operationId: `filler${index}`, responses: { 200: { description: 'ok' } } } },
      ]),
      [
        '/v1/files/{id}',
        {
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
          get: { operationId: 'getFile', responses: { 200: { description: 'ok' } } },
        },
      ],
      [
        '/v1/files/{id}/content',
        {
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
          get: { operationId: 'getContent', responses: { 200: { description: 'ok' } } },
        },
      ],
      ['/v1/zeta', { post: { operationId: 'zeta', responses: { 200: { description: 'ok' } } } }],
    ]),
  };

  async function appWithValidator() {
    cacheValidatorRouteRegexps();
    const app = express();
    app.use(
      OpenApiValidator.middleware({
        apiSpec: structuredClone(spec) as never,
        validateRequests: true,
        validateResponses: false,
      }),
    );
    app.use((req, res) => {
      const openapi = (
        req as unknown as { openapi: { schema: { operationId: string }; pathParams: Record<string, string> } }
      ).openapi;
      res.json({ operationId: openapi.schema.operationId, params: openapi.pathParams });
    });
    app.use(((error, _req, res, _next) => {
      res
        .status(error.status ?? 500)
        .set(error.headers ?? {})
        .json({ status: error.status, message: error.message });
    }) as express.ErrorRequestHandler);
    return app;
  }

  it('names the same operation and path parameters the full scan would', async () => {
    const app = await appWithValidator();
    expect((await request(app).get('/v1/files/file_1')).body).toEqual({
      operationId: 'getFile',
      params: { id: 'file_1' },
    });
    expect((await request(app).get('/v1/files/file%202/content')).body).toEqual({
      operationId: 'getContent',
      params: { id: 'file 2' },
    });
    expect((await request(app).get('/v1/filler7?x=1')).status).toBe(400); // unknown query parameter: still validated
    expect((await request(app).get('/v1/filler7')).body).toEqual({ operationId: 'filler7', params: {} });
  });

  it('answers an unknown path 404 and a known path with another method 405 with Allow, as the validator does', async () => {
    const app = await appWithValidator();
    const unknown = await request(app).get('/v1/nowhere');
    expect(unknown.status).toBe(404);
    const wrongMethod = await request(app).get('/v1/zeta');
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.allow).toBe('POST');
  });

  it("lets the validator's own lookup compile one route per request, not every route before the match", async () => {
    const app = await appWithValidator();
    await request(app).post('/v1/zeta'); // first request: the validator builds its middlewares
    const memoised = pathToRegexpModule.pathToRegexp;
    let compiles = 0;
    pathToRegexpModule.pathToRegexp = (path, options) => {
      compiles += 1;
      return memoised(path, options);
    };
    try {
      expect((await request(app).post('/v1/zeta')).body).toEqual({ operationId: 'zeta', params: {} });
    } finally {
      pathToRegexpModule.pathToRegexp = memoised;
    }
    // The full scan would compile all 23 templates before reaching /v1/zeta, the last one.
    expect(compiles).toBe(1);
  });
});
