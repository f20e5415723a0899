/**
 * App wiring: what every request goes through before and after its handler — body limits, JSON parsing,
 * content types, unknown paths and methods, responses that break the contract, and the error envelope of
 * each API family (OpenAI on /v1, Anthropic on /anthropic, JSON-RPC on /v1/mcp).
 */
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import express from 'express';
import OpenAI from 'openai';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { expectAnthropicError, expectOpenAIError, expectRequestId, usageOf } from '../helpers/contract-assertions.js';
import { createTestApp, type TestApp } from '../helpers/create-test-app.js';
import { assertMatchesSchema } from '../helpers/spec-schemas.js';
import { errorHandler } from '../../server/http/error-handler.js';
import { requestStart } from '../../server/http/request-start.js';
import { openDatabase } from '../../server/storage/database.js';
import { createUsageStore } from '../../server/storage/usage-store.js';
import { createUsageRecorder } from '../../server/usage/usage-recorder.js';
import { createLogger } from '../../server/logger.js';
import { unavailableHandlers } from '../../server/routes/unavailable.js';

const INTERNAL_ERROR = {
  message: 'Internal server error; quote the request id when reporting it.',
  type: 'server_error',
  param: null,
  code: 'internal_error',
} as const;

function usageRows(db: TestApp['db']) {
  return db.prepare('SELECT request_id, operation, status FROM usage_records ORDER BY seq').all() as Array<{
    request_id: string;
    operation: string;
    status: number;
  }>;
}

describe('request bodies', () => {
  it('answers 413 request_too_large in the OpenAI envelope when the JSON body exceeds maxBodyBytes', async () => {
    const { app, key } = await createTestApp({ maxBodyBytes: 2048 });
    const res = await request(app)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${key}`)
      .send({ model: 'local:chat', messages: [{ role: 'user', content: 'x'.repeat(3000) }] });
    expect(res.status).toBe(413);
    expectRequestId(res);
    expectOpenAIError(res.body, {
      message: 'The request body exceeds the limit of 2048 bytes.',
      type: 'request_too_large',
      param: null,
      code: 'request_too_large',
    });
  });

  it('accepts a body just under maxBodyBytes', async () => {
    const { app, key } = await createTestApp({ maxBodyBytes: 2048 });
    const body = { model: 'local:chat', messages: [{ role: 'user', content: 'x'.repeat(1900) }] };
    expect(Buffer.byteLength(JSON.stringify(body))).toBeLessThan(2048);
    const res = await request(app).post('/v1/chat/completions').set('authorization', `Bearer ${key}`).send(body);
    expect(res.status).toBe(200);
    expectRequestId(res);
    expect(res.body.choices[0].message.content).toBe(`You said: ${'x'.repeat(1900)}`);
  });

  it('answers 413 in the Anthropic envelope, with request-id, under /anthropic', async () => {
    const { app, key } = await createTestApp({ maxBodyBytes: 2048 });
    const res = await request(app)
      .post('/anthropic/v1/messages')
      .set('x-api-key', key)
      .set('anthropic-version', '2023-06-01')
      .send({ model: 'local:chat', max_tokens: 16, messages: [{ role: 'user', content: 'x'.repeat(3000) }] });
    expect(res.status).toBe(413);
    const id = expectRequestId(res, 'anthropic');
    expectAnthropicError(res.body, {
      type: 'request_too_large',
      message: 'The request body exceeds the limit of 2048 bytes.',
      requestId: id,
    });
  });

  it('answers 400 invalid_json for a body that is not JSON', async () => {
    const { app, key } = await createTestApp();
    const res = await request(app)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${key}`)
      .set('content-type', 'application/json')
      .send('{"model": "local:chat", "messages": [');
    expect(res.status).toBe(400);
    expectRequestId(res);
    expectOpenAIError(res.body, {
      message: 'The request body is not valid JSON: Unexpected end of JSON input',
      type: 'invalid_request_error',
      param: null,
      code: 'invalid_json',
    });
  });

  it('answers 400 invalid_json in the Anthropic envelope under /anthropic', async () => {
    const { app, key } = await createTestApp();
    const res = await request(app)
      .post('/anthropic/v1/messages')
      .set('x-api-key', key)
      .set('content-type', 'application/json')
      .send('{"model":');
    expect(res.status).toBe(400);
    const id = expectRequestId(res, 'anthropic');
    expectAnthropicError(res.body, {
      type: 'invalid_request_error',
      message: 'The request body is not valid JSON: Unexpected end of JSON input',
      requestId: id,
    });
  });

  it('answers 415 unsupported_media_type, with no param, for a body that is not application/json', async () => {
    const { app, key } = await createTestApp();
    const res = await request(app)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${key}`)
      .set('content-type', 'text/plain')
      .send('model=local:chat');
    expect(res.status).toBe(415);
    expectRequestId(res);
    expectOpenAIError(res.body, {
      message: '/v1/chat/completions unsupported media type text/plain',
      type: 'invalid_request_error',
      param: null,
      code: 'unsupported_media_type',
    });
  });

  it('records a request the validator refused under its operationId', async () => {
    const { app, key, db } = await createTestApp();
    const res = await request(app)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${key}`)
      .send({ model: 'local:chat', messages: 'hello' });
    expect(res.status).toBe(400);
    const id = expectRequestId(res);
    const records = await usageOf(app, key, id);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      request_id: id,
      operation: 'createChatCompletion',
      model_requested: null,
      status: 400,
    });
    expect(usageRows(db)[0]).toEqual({ request_id: id, operation: 'createChatCompletion', status: 400 });
  });
});

describe('unknown paths and methods', () => {
  it('answers 404 unknown_path with a key', async () => {
    const { app, key } = await createTestApp();
    const res = await request(app).get('/v1/nothing-here').set('authorization', `Bearer ${key}`);
    expect(res.status).toBe(404);
    expectRequestId(res);
    expectOpenAIError(res.body, {
      message: 'Unknown path. The API is described at GET /openapi.json.',
      type: 'not_found_error',
      param: null,
      code: 'unknown_path',
    });
  });

  it('answers 401 for an unknown path without a key, because authentication runs first', async () => {
    const { app } = await createTestApp();
    const res = await request(app).get('/v1/nothing-here');
    expect(res.status).toBe(401);
    expectRequestId(res);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="omnigate"');
    expectOpenAIError(res.body, {
      message: 'Missing API key: send an `Authorization: Bearer <key>` header.',
      type: 'authentication_error',
      param: null,
      code: 'missing_api_key',
    });
  });

  it('answers 404 unknown_path outside /v1 too', async () => {
    const { app, key } = await createTestApp();
    const res = await request(app).get('/robots.txt').set('authorization', `Bearer ${key}`);
    expect(res.status).toBe(404);
    expectRequestId(res);
    expect(res.body.error.code).toBe('unknown_path');
  });

  it('answers 404 in the Anthropic envelope for an unknown path under /anthropic', async () => {
    const { app, key } = await createTestApp();
    const res = await request(app).get('/anthropic/v1/batches').set('x-api-key', key);
    expect(res.status).toBe(404);
    const id = expectRequestId(res, 'anthropic');
    expectAnthropicError(res.body, {
      type: 'not_found_error',
      message: 'Unknown path. The API is described at GET /openapi.json.',
      requestId: id,
    });
  });

  it('answers 405 method_not_allowed with an Allow header for a wrong method on a known path', async () => {
    const { app, key } = await createTestApp();
    const res = await request(app).put('/v1/models').set('authorization', `Bearer ${key}`);
    expect(res.status).toBe(405);
    expectRequestId(res);
    expect(res.headers.allow).toBe('GET');
    expectOpenAIError(res.body, {
      message: 'Method not allowed: PUT method not allowed',
      type: 'invalid_request_error',
      param: null,
      code: 'method_not_allowed',
    });
  });

  it('lists every method of the path in Allow', async () => {
    const { app, key } = await createTestApp();
    const res = await request(app).post('/v1/responses/resp_1').set('authorization', `Bearer ${key}`).send({});
    expect(res.status).toBe(405);
    expectRequestId(res);
    expect(res.headers.allow).toBe('DELETE, GET');
    expect(res.body.error.code).toBe('method_not_allowed');
  });
});

describe('responses that break the contract', () => {
  it('answers 500 internal_error and logs the cause with the request id when a JSON answer breaks the spec', async () => {
    // A stored response whose row was damaged (here: an unknown `status`) reaches res.json unchanged, so the
    // response validator is what stands between it and the caller.
    const { app, key, db, logs } = await createTestApp();
    const auth = { authorization: `Bearer ${key}` };
    const created = await request(app).post('/v1/responses').set(auth).send({ model: 'local:chat', input: 'hello' });
    expect(created.status).toBe(200);
    db.prepare(`UPDATE responses SET response = json_set(response, '$.status', 'exploded') WHERE id = ?`).run(
      created.body.id,
    );

    const res = await request(app).get(`/v1/responses/${created.body.id}`).set(auth);
    expect(res.status).toBe(500);
    const id = expectRequestId(res);
    expect(res.headers['x-should-retry']).toBe('false');
    expectOpenAIError(res.body, INTERNAL_ERROR);
    const errors = logs.filter((line) => line.level === 50);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      requestId: id,
      status: 500,
      type: 'server_error',
      code: 'internal_error',
      method: 'GET',
      path: `/v1/responses/${created.body.id}`,
      msg: INTERNAL_ERROR.message,
    });
    expect((errors[0].err as { message: string }).message).toBe(
      '/response/status must be equal to one of the allowed values: completed, failed, in_progress, incomplete, cancelled, queued',
    );
  });

  it('records the 500 in the usage records', async () => {
    const { app, key, db } = await createTestApp();
    const auth = { authorization: `Bearer ${key}` };
    const created = await request(app).post('/v1/responses').set(auth).send({ model: 'local:chat', input: 'hello' });
    db.prepare(`UPDATE responses SET response = json_set(response, '$.status', 'exploded')`).run();
    const res = await request(app).get(`/v1/responses/${created.body.id}`).set(auth);
    expect(res.status).toBe(500);
    const id = expectRequestId(res);
    const records = await usageOf(app, key, id);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ request_id: id, operation: 'getResponse', model: null, status: 500 });
  });
});

describe('error envelopes by API family', () => {
  /**
   * Every operation is served now, so an unserved one is made here: routes/unavailable.ts's handler under a
   * /v1 path of a tiny Express app with the real request start and the real error handler (what createApp mounts).
   */
  function unservedApp() {
    const logs: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        logs.push(
          ...chunk
            .toString('utf8')
            .split('\n')
            .filter((line) => line.trim())
            .map((line) => JSON.parse(line) as Record<string, unknown>),
        );
        callback();
      },
    });
    const logger = createLogger('debug', sink);
    const app = express();
    app.use(requestStart({ logger, usage: createUsageRecorder(createUsageStore(openDatabase(':memory:'))) }));
    const handlers = unavailableHandlers({ invokeWebSearchTool: 'the web_search tool' });
    app.post('/v1/tools/web_search', (req, res, next) =>
      handlers.invokeWebSearchTool(req as never, res as never, next),
    );
    app.use(errorHandler(logger));
    return { app, logs };
  }

  it('renders capability_unavailable in the OpenAI envelope on /v1', async () => {
    const { app } = unservedApp();
    const res = await request(app).post('/v1/tools/web_search').send({ query: 'a lighthouse' });
    expect(res.status).toBe(503);
    expectRequestId(res);
    // Retrying cannot make this build serve it: the SDKs are told not to wait for two retries.
    expect(res.headers['x-should-retry']).toBe('false');
    expectOpenAIError(res.body, {
      message: 'This Omnigate build does not serve the web_search tool yet.',
      type: 'service_unavailable_error',
      param: null,
      code: 'capability_unavailable',
    });
  });

  it('logs capability_unavailable at info without a stack, and the official SDK does not retry it', async () => {
    const { app, logs } = unservedApp();
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      const client = new OpenAI({ apiKey: 'unused', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 2 });
      await expect(client.post('/tools/web_search', { body: { query: 'a lighthouse' } })).rejects.toMatchObject({
        status: 503,
      });
      const lines = logs.filter((line) => line.code === 'capability_unavailable');
      expect(lines).toHaveLength(1); // one request: no retry
      expect(lines[0]).toMatchObject({ level: 30 });
      expect(lines[0].err).toBeUndefined();
    } finally {
      server.close();
    }
  });

  it('renders a validation error in the Anthropic envelope with request-id under /anthropic', async () => {
    const { app, key } = await createTestApp();
    const res = await request(app)
      .post('/anthropic/v1/messages')
      .set('x-api-key', key)
      .set('anthropic-version', '2023-06-01')
      .send({ model: 'local:chat', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(400);
    const id = expectRequestId(res, 'anthropic');
    expect(Object.keys(res.body)).toEqual(['type', 'error', 'request_id']);
    expectAnthropicError(res.body, {
      type: 'invalid_request_error',
      message: "/body/max_tokens must have required property 'max_tokens'",
      requestId: id,
    });
  });

  it('renders an unknown model as not_found_error in the Anthropic envelope', async () => {
    const { app, key } = await createTestApp();
    const res = await request(app)
      .post('/anthropic/v1/messages/count_tokens')
      .set('x-api-key', key)
      .send({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(404);
    const id = expectRequestId(res, 'anthropic');
    expectAnthropicError(res.body, {
      type: 'not_found_error',
      message: "The model 'no-such-model' does not exist. List the available models with GET /v1/models.",
      requestId: id,
    });
  });

  it('answers initialize on /v1/mcp as an SSE stream of one JSON-RPC response (stateless 2025 leg)', async () => {
    const { app, key } = await createTestApp();
    const res = await request(app)
      .post('/v1/mcp')
      .set('authorization', `Bearer ${key}`)
      .set('accept', 'application/json, text/event-stream')
      .send({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      });
    expect(res.status).toBe(200);
    expectRequestId(res, 'mcp');
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(res.headers['mcp-session-id']).toBeUndefined();
    const data = /^data: (.+)$/m.exec(res.text)?.[1];
    expect(JSON.parse(data ?? 'null')).toMatchObject({
      jsonrpc: '2.0',
      id: 1,
      result: { protocolVersion: '2025-11-25', serverInfo: { name: 'omnigate' }, capabilities: { tools: {} } },
    });
  });

  it.each(['get', 'delete'] as const)(
    'refuses %s /v1/mcp with 405 Allow: POST in a JSON-RPC error, since the endpoint keeps no sessions',
    async (method) => {
      const { app, key } = await createTestApp();
      const res = await request(app)[method]('/v1/mcp').set('authorization', `Bearer ${key}`);
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('POST');
      expectRequestId(res, 'mcp');
      expect(res.body).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32601,
          message: 'Method not allowed: the MCP endpoint keeps no sessions; send JSON-RPC messages with POST.',
        },
      });
    },
  );

  it.each(['post', 'get', 'delete'] as const)(
    'answers a missing or wrong key on %s /v1/mcp with a 401 JSON-RPC error, keeping the challenge and request id',
    async (method) => {
      const { app } = await createTestApp();
      for (const authorization of [undefined, 'Bearer og-not-a-key']) {
        const req = request(app)[method]('/v1/mcp');
        const res = await (authorization ? req.set('authorization', authorization) : req).send({
          jsonrpc: '2.0',
          id: 1,
          method: 'ping',
        });
        expect(res.status).toBe(401);
        expectRequestId(res, 'mcp');
        expect(res.headers['www-authenticate']).toBe('Bearer realm="omnigate"');
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        assertMatchesSchema('JsonRpcErrorResponse', res.body);
        // The body was not read before authentication: the request's id is unknown, hence null.
        expect(res.body).toEqual({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32000, message: expect.stringMatching(authorization ? /API key/ : /^Missing API key/) },
        });
      }
    },
  );
});
