/**
 * What a new user and an operator hit first (the "first run" issue): a browser on `/`, HEAD requests,
 * the favicon, cache-busters on the public documents, model ids typed into a query, the hint for the wrong
 * key header, and the access line every request logs.
 */
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/create-test-app.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});

describe('a browser', () => {
  it('is sent from / to /docs without a key', async () => {
    const res = await request(t.app).get('/');
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('/docs');
    expect(res.headers['x-request-id']).toMatch(/^req_/);
  });

  it('asking for /favicon.ico gets 204 and no authentication failure in the log', async () => {
    const before = t.logs.length;
    const res = await request(t.app).get('/favicon.ico');
    expect(res.status).toBe(204);
    expect(t.logs.slice(before).some((line) => line.code === 'missing_api_key')).toBe(false);
  });

  it.each(['/openapi.json?v=2', '/openapi.yaml?_=123', '/health?probe=lb', '/?utm_source=readme'])(
    'ignores the cache-buster in %s',
    async (path) => {
      const res = await request(t.app).get(path);
      expect(res.status, JSON.stringify(res.body)).toBeLessThan(400);
    },
  );
});

describe('HEAD works wherever GET does', () => {
  it('on a public path: the GET status and headers, no body', async () => {
    const get = await request(t.app).get('/health');
    const head = await request(t.app).head('/health');
    expect(head.status).toBe(200);
    expect(head.headers['content-type']).toBe(get.headers['content-type']);
    expect(head.text ?? '').toBe('');
  });

  it('on a keyed path, with the key', async () => {
    const res = await request(t.app).head('/v1/models').set('authorization', `Bearer ${t.key}`);
    expect(res.status).toBe(200);
    expect(Number(res.headers['content-length'])).toBeGreaterThan(0);
  });

  it('and still needs the key where GET does', async () => {
    expect((await request(t.app).head('/v1/models')).status).toBe(401);
  });
});

describe('model ids in the query', () => {
  it('GET /v1/usage?limit=20&model=local:chat answers, as the README shows', async () => {
    await request(t.app)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${t.key}`)
      .send({ model: 'local:chat', messages: [{ role: 'user', content: 'hi' }] });
    await t.usage.flush();
    const res = await request(t.app).get('/v1/usage?limit=20&model=local:chat').set('authorization', `Bearer ${t.key}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  });
});

describe('the wrong key header on /v1', () => {
  it('says that /v1 wants Authorization: Bearer', async () => {
    const res = await request(t.app).get('/v1/models').set('x-api-key', t.key);
    expect(res.status).toBe(401);
    expect(res.body.error.message).toMatch(/x-api-key.*only under \/anthropic.*Authorization: Bearer/);
  });
});

describe('access log', () => {
  it('writes one line per request: method, path, status, duration, request id, key id and model', async () => {
    const before = t.logs.length;
    const res = await request(t.app)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${t.key}`)
      .send({ model: 'reference', messages: [{ role: 'user', content: 'hi' }] });
    const lines = t.logs.slice(before).filter((line) => line.msg === 'request');
    expect(lines).toEqual([
      expect.objectContaining({
        level: 30,
        method: 'POST',
        path: '/v1/chat/completions',
        status: 200,
        ms: expect.any(Number),
        requestId: res.headers['x-request-id'],
        keyId: expect.stringMatching(/^key_/),
        model: 'local:chat',
      }),
    ]);
    expect(JSON.stringify(lines)).not.toContain(t.key);
  });
});

describe('messages that say what is allowed', () => {
  it('a role outside the allowed set names the allowed roles', async () => {
    const res = await request(t.app)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${t.key}`)
      .send({ model: 'local:chat', messages: [{ role: 'bogus', content: 'hi' }] });
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe('messages.0.role');
    for (const role of ['system', 'developer', 'user', 'assistant', 'tool']) {
      expect(res.body.error.message).toContain(`"${role}"`);
    }
  });

  it('an enum value outside the list names the list', async () => {
    const res = await request(t.app)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${t.key}`)
      .send({ model: 'local:chat', messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'huge' });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/allowed values: .*low, medium, high/);
  });
});
