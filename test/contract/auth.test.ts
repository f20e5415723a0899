/**
 * Authentication and authorisation: which headers carry a key on which paths, what a missing, malformed,
 * unknown or revoked key gets, which paths are public, how keys are stored, and per-key model limits.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { SPEC_PATH } from '../../server/spec/load-spec.js';
import { countTextTokens } from '../../server/tokens/tokenizer.js';
import { startFakeUpstream } from '../fakes/fake-upstream.js';
import { expectAnthropicError, expectOpenAIError, expectRequestId } from '../helpers/contract-assertions.js';
import { createTestApp } from '../helpers/create-test-app.js';

const MISSING_V1 = {
  message: 'Missing API key: send an `Authorization: Bearer <key>` header.',
  type: 'authentication_error',
  param: null,
  code: 'missing_api_key',
} as const;
const INVALID = {
  message: 'Invalid API key.',
  type: 'authentication_error',
  param: null,
  code: 'invalid_api_key',
} as const;
const COUNT_BODY = { model: 'local:chat', messages: [{ role: 'user', content: 'How many tokens is this?' }] };
/** 3 tokens to prime the reply, 3 per message, plus the role and the text (the documented recipe). */
const COUNT_TOKENS = 3 + 3 + (await countTextTokens('user')) + (await countTextTokens('How many tokens is this?'));

describe('rejected keys on /v1', () => {
  it('answers 401 missing_api_key with WWW-Authenticate when no key is sent', async () => {
    const { app, db } = await createTestApp();
    const res = await request(app).get('/v1/models');
    expect(res.status).toBe(401);
    expectRequestId(res);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="omnigate"');
    expectOpenAIError(res.body, MISSING_V1);
    // Unauthenticated calls are logged, never recorded.
    expect(db.prepare('SELECT COUNT(*) AS n FROM usage_records').get()).toEqual({ n: 0 });
  });

  it.each([
    ['Basic scheme', (key: string) => `Basic ${key}`],
    ['Token scheme', (key: string) => `Token ${key}`],
    ['Bearer without a key', () => 'Bearer'],
    ['the bare key', (key: string) => key],
  ])('answers 401 missing_api_key for an Authorization header with %s', async (_name, header) => {
    const { app, key } = await createTestApp();
    const res = await request(app).get('/v1/models').set('authorization', header(key));
    expect(res.status).toBe(401);
    expectRequestId(res);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="omnigate"');
    expectOpenAIError(res.body, MISSING_V1);
  });

  it('accepts the Bearer scheme case-insensitively', async () => {
    const { app, key } = await createTestApp();
    const res = await request(app).get('/v1/models').set('authorization', `bearer ${key}`);
    expect(res.status).toBe(200);
    expectRequestId(res);
    expect(res.body.object).toBe('list');
  });

  it('answers 401 invalid_api_key for a key it does not know', async () => {
    const { app } = await createTestApp();
    const res = await request(app).get('/v1/models').set('authorization', 'Bearer og-not-a-real-key');
    expect(res.status).toBe(401);
    expectRequestId(res);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="omnigate"');
    expectOpenAIError(res.body, INVALID);
  });

  it('answers 401 invalid_api_key for a revoked key that worked before', async () => {
    const { app, key, keys } = await createTestApp();
    expect((await request(app).get('/v1/models').set('authorization', `Bearer ${key}`)).status).toBe(200);
    expect(await keys.revoke((await keys.list())[0].id)).toBe(true);
    const res = await request(app).get('/v1/models').set('authorization', `Bearer ${key}`);
    expect(res.status).toBe(401);
    expectRequestId(res);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="omnigate"');
    expectOpenAIError(res.body, INVALID);
  });

  it('does not accept x-api-key on /v1', async () => {
    const { app, key } = await createTestApp();
    const res = await request(app).get('/v1/models').set('x-api-key', key);
    expect(res.status).toBe(401);
    expectRequestId(res);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="omnigate"');
    expectOpenAIError(res.body, {
      ...MISSING_V1,
      message: `${MISSING_V1.message} The \`x-api-key\` header is read only under /anthropic; /v1 wants \`Authorization: Bearer <key>\`.`,
    });
  });
});

describe('keys on /anthropic', () => {
  it.each([['2023-06-01'], ['2099-12-31'], [undefined]])(
    'accepts x-api-key with anthropic-version %s',
    async (version) => {
      const { app, key } = await createTestApp();
      const req = request(app).post('/anthropic/v1/messages/count_tokens').set('x-api-key', key);
      if (version) {
        req.set('anthropic-version', version);
      }
      const res = await req.send(COUNT_BODY);
      expect(res.status).toBe(200);
      expectRequestId(res, 'anthropic');
      expect(res.body).toEqual({ input_tokens: COUNT_TOKENS });
    },
  );

  it('accepts Authorization: Bearer on /anthropic too', async () => {
    const { app, key } = await createTestApp();
    const res = await request(app)
      .post('/anthropic/v1/messages/count_tokens')
      .set('authorization', `Bearer ${key}`)
      .send(COUNT_BODY);
    expect(res.status).toBe(200);
    expectRequestId(res, 'anthropic');
    expect(res.body).toEqual({ input_tokens: COUNT_TOKENS });
  });

  it('answers a missing key with 401 in the Anthropic envelope naming both headers', async () => {
    const { app } = await createTestApp();
    const res = await request(app).post('/anthropic/v1/messages/count_tokens').send(COUNT_BODY);
    expect(res.status).toBe(401);
    const id = expectRequestId(res, 'anthropic');
    expect(res.headers['www-authenticate']).toBe('Bearer realm="omnigate"');
    expectAnthropicError(res.body, {
      type: 'authentication_error',
      message: 'Missing API key: send an `Authorization: Bearer <key>` or `x-api-key: <key>` header.',
      requestId: id,
    });
  });

  it('answers an unknown x-api-key with 401 invalid in the Anthropic envelope', async () => {
    const { app } = await createTestApp();
    const res = await request(app)
      .post('/anthropic/v1/messages/count_tokens')
      .set('x-api-key', 'sk-ant-unknown')
      .send(COUNT_BODY);
    expect(res.status).toBe(401);
    const id = expectRequestId(res, 'anthropic');
    expect(res.headers['www-authenticate']).toBe('Bearer realm="omnigate"');
    expectAnthropicError(res.body, { type: 'authentication_error', message: 'Invalid API key.', requestId: id });
  });
});

describe('public paths', () => {
  it('serves /health without a key', async () => {
    const clock = 1_767_225_600_000;
    const { app } = await createTestApp({ now: () => clock });
    const res = await request(app).get('/health');
    expect(res.status).toBe(200);
    expectRequestId(res);
    expect(res.body).toEqual({ status: 'ok', version: '1.0.0', uptime_s: 0 });
  });

  it('reports uptime in whole seconds from the app clock', async () => {
    let clock = 1_767_225_600_000;
    const { app } = await createTestApp({ now: () => clock });
    clock += 90_500;
    const res = await request(app).get('/health');
    expect(res.status).toBe(200);
    expectRequestId(res);
    expect(res.body).toEqual({ status: 'ok', version: '1.0.0', uptime_s: 90 });
  });

  it.each(['draining', 'shutdown'] as const)(
    'answers /health with 503 shutting_down once %s has begun',
    async (phase) => {
      const testApp = await createTestApp();
      testApp[phase].abort();
      const res = await request(testApp.app).get('/health');
      expect(res.status).toBe(503);
      expectRequestId(res);
      expectOpenAIError(res.body, {
        message: 'The server is shutting down.',
        type: 'service_unavailable_error',
        param: null,
        code: 'shutting_down',
      });
    },
  );

  it('serves /openapi.json without a key: the contract itself', async () => {
    const { app } = await createTestApp();
    const res = await request(app).get('/openapi.json');
    expect(res.status).toBe(200);
    expectRequestId(res);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body.openapi).toBe('3.1.0');
    expect(res.body.info.title).toBe('Omnigate API');
    expect(Object.keys(res.body.paths)).toContain('/v1/chat/completions');
  });

  it('serves /openapi.yaml without a key, byte for byte the spec file', async () => {
    const { app } = await createTestApp();
    const res = await request(app).get('/openapi.yaml');
    expect(res.status).toBe(200);
    expectRequestId(res);
    expect(res.headers['content-type']).toBe('application/yaml; charset=utf-8');
    expect(res.text).toBe(readFileSync(SPEC_PATH, 'utf8'));
  });

  it('answers /docs without a key with 404 docs_not_built when the docs were not built', async () => {
    const { app } = await createTestApp();
    const res = await request(app).get('/docs');
    expect(res.status).toBe(404);
    expectRequestId(res);
    expectOpenAIError(res.body, {
      message: 'The API docs have not been built; run `npm run docs`.',
      type: 'not_found_error',
      param: null,
      code: 'docs_not_built',
    });
  });

  it('writes no usage record for public paths, even when a key is sent', async () => {
    const { app, key, db } = await createTestApp();
    for (const path of ['/health', '/openapi.json', '/openapi.yaml', '/docs']) {
      const res = await request(app).get(path).set('authorization', `Bearer ${key}`);
      expectRequestId(res);
    }
    const list = await request(app).get('/v1/usage').set('authorization', `Bearer ${key}`);
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(db.prepare('SELECT operation FROM usage_records').all()).toEqual([{ operation: 'listUsage' }]);
  });
});

describe('key storage', () => {
  it('stores only a keyed hash of each key and a 7-character display prefix: no column holds the secret', async () => {
    const { app, key, keys, db } = await createTestApp();
    const limited = await keys.create({ name: 'limited', allowedModels: ['local-chat'] });
    for (const secret of [key, limited.key]) {
      expect((await request(app).get('/v1/models').set('authorization', `Bearer ${secret}`)).status).toBe(200);
    }
    const rows = db.prepare('SELECT * FROM api_keys ORDER BY name').all() as Array<Record<string, unknown>>;
    expect(rows).toHaveLength(2);
    for (const [row, secret] of [
      [rows[0], limited.key],
      [rows[1], key],
    ] as const) {
      expect(secret).toMatch(/^og-[A-Za-z0-9_-]{32}$/);
      for (const value of Object.values(row)) {
        const text = Buffer.isBuffer(value)
          ? `${value.toString('utf8')} ${value.toString('hex')} ${value.toString('base64')}`
          : String(value);
        expect(text).not.toContain(secret);
        expect(text).not.toContain(secret.slice(3));
      }
      expect(row.hash).not.toEqual(createHash('sha256').update(secret).digest());
      expect(row.hash_scheme).toBe('hmac-sha256');
      expect(row.prefix).toBe(secret.slice(0, 7));
    }
    expect(rows.map((row) => [row.name, row.allowed_models, row.revoked_at])).toEqual([
      ['limited', '["local-chat"]', null],
      ['test', '[]', null],
    ]);
  });
});

describe('keys limited to some models', () => {
  it('lets a key use its allowed model under any of its names and answers 403 model_not_allowed for others', async () => {
    const upstream = await startFakeUpstream();
    try {
      const { app, keys } = await createTestApp({
        providers: [
          {
            id: 'fake',
            type: 'openai-compatible',
            base_url: `${upstream.origin}/v1`,
            timeout_ms: 5000,
            max_connections: 2,
            headers: {},
            responses: 'translate',
          },
        ],
        models: [{ provider: 'fake', model: 'big-model', type: 'chat', aliases: ['big'] }],
      });
      const { key } = await keys.create({ name: 'local only', allowedModels: ['local-chat'] });
      const auth = { authorization: `Bearer ${key}` };
      const messages = [{ role: 'user', content: 'hi' }];

      for (const model of ['local:chat', 'local-chat', 'reference']) {
        const ok = await request(app).post('/v1/chat/completions').set(auth).send({ model, messages });
        expect(ok.status).toBe(200);
        expectRequestId(ok);
        expect(ok.body.model).toBe('local:chat');
      }
      for (const model of ['fake:big-model', 'big']) {
        const res = await request(app).post('/v1/chat/completions').set(auth).send({ model, messages });
        expect(res.status).toBe(403);
        expectRequestId(res);
        expectOpenAIError(res.body, {
          message: `This API key may not use the model '${model}'.`,
          type: 'permission_error',
          param: 'model',
          code: 'model_not_allowed',
        });
      }
      expect(upstream.requests).toEqual([]);
    } finally {
      await upstream.close();
    }
  });

  it('answers 403 in the Anthropic envelope under /anthropic', async () => {
    const upstream = await startFakeUpstream();
    try {
      const { app, keys } = await createTestApp({
        providers: [
          {
            id: 'fake',
            type: 'openai-compatible',
            base_url: `${upstream.origin}/v1`,
            timeout_ms: 5000,
            max_connections: 2,
            headers: {},
            responses: 'translate',
          },
        ],
        models: [{ provider: 'fake', model: 'big-model', type: 'chat', aliases: [] }],
      });
      const { key } = await keys.create({ name: 'local only', allowedModels: ['local:chat'] });
      const res = await request(app)
        .post('/anthropic/v1/messages/count_tokens')
        .set('x-api-key', key)
        .send({ ...COUNT_BODY, model: 'fake:big-model' });
      expect(res.status).toBe(403);
      const id = expectRequestId(res, 'anthropic');
      expectAnthropicError(res.body, {
        type: 'permission_error',
        message: "This API key may not use the model 'fake:big-model'.",
        requestId: id,
      });
    } finally {
      await upstream.close();
    }
  });
});
