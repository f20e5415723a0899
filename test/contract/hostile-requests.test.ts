/**
 * Requests an attacker with one valid key would send (the hardening issue's reproductions): each must get a
 * fast 4xx in its family's envelope with the request id, bounded logs, and a server that keeps serving.
 */
import { gzipSync } from 'node:zlib';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../server/http/json-depth.js';
import { createTestApp, type TestApp } from '../helpers/create-test-app.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});

const chatBody = { model: 'local:chat', messages: [{ role: 'user', content: 'hi' }] };

function post(path: string) {
  return request(t.app).post(path).set('authorization', `Bearer ${t.key}`);
}

async function stillServes(): Promise<void> {
  const health = await request(t.app).get('/health');
  expect(health.status).toBe(200);
  const chat = await post('/v1/chat/completions').send(chatBody);
  expect(chat.status).toBe(200);
}

function expectOpenAiError(res: request.Response, status: number, code: string | null): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.headers['x-request-id']).toMatch(/^req_/);
  expect(res.body.error).toMatchObject({ code, type: expect.any(String), message: expect.any(String) });
}

/** `{"a":{"a":…{}…}}` nested `depth` levels, as raw JSON text. */
function nested(depth: number): string {
  return `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;
}

describe('prototype member names as body keys (finding 4)', () => {
  it.each(['hasOwnProperty', 'valueOf', '__proto__', '__defineGetter__', 'constructor', 'toString'])(
    'a chat body with a top-level %s key is answered, the key ignored with a warning',
    async (name) => {
      const raw = `{"model":"local:chat","messages":[{"role":"user","content":"hi"}],"${name}":1}`;
      const res = await post('/v1/chat/completions').set('content-type', 'application/json').send(raw);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.choices[0].message.content).toBe('You said: hi');
    },
  );
});

describe('nesting depth (finding 5)', () => {
  it('refuses a tool schema nested 10,000 levels deep with 400 nesting_too_deep', async () => {
    const raw = `{"model":"local:chat","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":${nested(10_000)}}}]}`;
    const res = await post('/v1/chat/completions').set('content-type', 'application/json').send(raw);
    expectOpenAiError(res, 400, 'nesting_too_deep');
    await stillServes();
  });

  it('refuses deep nesting on /anthropic in the Anthropic envelope', async () => {
    const raw = `{"model":"local:chat","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":${nested(10_000)}}]}`;
    const res = await post('/anthropic/v1/messages').set('content-type', 'application/json').send(raw);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  });

  it('accepts a schema nested exactly to the limit, and brackets inside strings do not count', async () => {
    const parameters = `{"type":"object","description":"${'['.repeat(5000)}","properties":${nested(MAX_JSON_DEPTH - 8)}}`;
    const raw = `{"model":"local:chat","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":${parameters}}}]}`;
    const res = await post('/v1/chat/completions').set('content-type', 'application/json').send(raw);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  });

  it('one level over the limit is refused, as raw bytes and gzip-compressed, and escaped quotes keep strings closed', async () => {
    // The depth is measured on the raw bytes while they arrive: `\\"` inside a string must not end it, or the
    // brackets after it would count.
    const over = `{"model":"local:chat","messages":[{"role":"user","content":"a \\" [[[[ \\\\"}],"tools":[{"type":"function","function":{"name":"f","parameters":${nested(MAX_JSON_DEPTH - 3)}}}]}`;
    const atLimit = over.replace(nested(MAX_JSON_DEPTH - 3), nested(MAX_JSON_DEPTH - 4));
    expect(JSON.parse(over).messages[0].content).toBe('a " [[[[ \\');
    const served = await post('/v1/chat/completions').set('content-type', 'application/json').send(atLimit);
    expect(served.status, JSON.stringify(served.body)).toBe(200);
    expectOpenAiError(
      await post('/v1/chat/completions').set('content-type', 'application/json').send(over),
      400,
      'nesting_too_deep',
    );
    const gzipped = await post('/v1/chat/completions')
      .set('content-type', 'application/json')
      .set('content-encoding', 'gzip')
      .serialize((body) => body)
      .send(gzipSync(over));
    expectOpenAiError(gzipped, 400, 'nesting_too_deep');
  });
});

describe('bodies that cannot be decoded (finding 6)', () => {
  it.each(['gzip', 'deflate', 'br'])('a body claiming Content-Encoding %s that is not is a 400', async (encoding) => {
    const res = await post('/v1/chat/completions')
      .set('content-type', 'application/json')
      .set('content-encoding', encoding)
      .serialize((body) => body)
      .send(Buffer.from('this is not compressed at all'));
    expectOpenAiError(res, 400, 'invalid_content_encoding');
    await stillServes();
  });

  it('a real gzip body is still accepted', async () => {
    const res = await post('/v1/chat/completions')
      .set('content-type', 'application/json')
      .set('content-encoding', 'gzip')
      .serialize((body) => body) // superagent would JSON-encode a Buffer
      .send(gzipSync(JSON.stringify(chatBody)));
    expect(res.status).toBe(200);
  });
});

describe('multipart bodies (finding 7)', () => {
  const boundary = 'XBOUNDARY';
  function part(name: string, value: string, filename?: string): string {
    const disposition = `form-data; name="${name}"${filename ? `; filename="${filename}"` : ''}`;
    return `--${boundary}\r\nContent-Disposition: ${disposition}\r\n${filename ? 'Content-Type: text/plain\r\n' : ''}\r\n${value}\r\n`;
  }

  it.each(['/v1/files', '/v1/videos'])('a form cut off in the middle of a part is a 400 on %s', async (path) => {
    const truncated = `${part('purpose', 'assistants')}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello`;
    const res = await post(path).set('content-type', `multipart/form-data; boundary=${boundary}`).send(truncated);
    expectOpenAiError(res, 400, 'invalid_multipart');
    expect(res.body.error.message).toMatch(/multipart body could not be read/);
    await stillServes();
  });

  it('too many fields is a 400 saying so, not a 413 about file size', async () => {
    const fields = Array.from({ length: 40 }, (_, index) => part(`field${index}`, 'x')).join('');
    const res = await post('/v1/files')
      .set('content-type', `multipart/form-data; boundary=${boundary}`)
      .send(`${fields}--${boundary}--\r\n`);
    expectOpenAiError(res, 400, 'invalid_multipart');
    expect(res.body.error.message).toMatch(/more fields/);
  });

  it('too many files is a 400 saying so', async () => {
    const files = Array.from({ length: 6 }, (_, index) => part('file', 'hello', `f${index}.txt`)).join('');
    const res = await post('/v1/files')
      .set('content-type', `multipart/form-data; boundary=${boundary}`)
      .send(`${files}--${boundary}--\r\n`);
    expectOpenAiError(res, 400, 'invalid_multipart');
    expect(res.body.error.message).toMatch(/more files/);
  });

  it('a file over the size limit is a 413 request_too_large', async () => {
    // Uploads have their own limit (OMNIGATE_MAX_FILE_BYTES), separate from the JSON body limit.
    const small = await createTestApp({ files: { maxFileBytes: 2048 } });
    const res = await request(small.app)
      .post('/v1/files')
      .set('authorization', `Bearer ${small.key}`)
      .set('content-type', `multipart/form-data; boundary=${boundary}`)
      .send(`${part('purpose', 'assistants')}${part('file', 'x'.repeat(5000), 'big.txt')}--${boundary}--\r\n`);
    expect(res.status).toBe(413);
    expect(res.body.error).toMatchObject({ code: 'file_too_large', type: 'request_too_large' });
  });
});

describe('amplification (finding 9)', () => {
  it('50,000 unknown fields give one summarised warning, not 50,000 log lines', async () => {
    const big = await createTestApp({ maxBodyBytes: 8 * 1024 * 1024 });
    const body: Record<string, unknown> = { ...chatBody };
    for (let index = 0; index < 50_000; index++) {
      body[`unknown_field_${index}`] = 1;
    }
    const res = await request(big.app)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${big.key}`)
      .send(body);
    expect(res.status).toBe(200);
    const lines = big.logs.filter((line) => line.level === 40);
    expect(lines).toHaveLength(1);
    expect(String(lines[0].msg)).toMatch(/50000 unknown fields/);
    expect(JSON.stringify(lines).length).toBeLessThan(2_000);
  });

  it('a 5 MiB unknown field name is not logged whole', async () => {
    const big = await createTestApp({ maxBodyBytes: 8 * 1024 * 1024 });
    const name = 'n'.repeat(5 * 1024 * 1024);
    const res = await request(big.app)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${big.key}`)
      .set('content-type', 'application/json')
      .send(`{"model":"local:chat","messages":[{"role":"user","content":"hi"}],"${name}":1}`);
    expect(res.status).toBe(200);
    expect(JSON.stringify(big.logs).length).toBeLessThan(20_000);
  });

  it('a model name over the contract limit is a 400 that does not echo it whole; one at the limit is a short 404', async () => {
    const huge = 'm'.repeat(512 * 1024);
    const before = t.logs.length;
    const tooLong = await post('/v1/chat/completions').send({ ...chatBody, model: huge });
    expectOpenAiError(tooLong, 400, null);
    expect(JSON.stringify(tooLong.body).length).toBeLessThan(2_000);
    const unknown = await post('/v1/chat/completions').send({ ...chatBody, model: 'm'.repeat(256) });
    expectOpenAiError(unknown, 404, 'model_not_found');
    expect(unknown.body.error.message.length).toBeLessThan(300);
    const anthropic = await post('/anthropic/v1/messages').send({
      model: huge,
      max_tokens: 5,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(anthropic.status).toBe(400);
    expect(JSON.stringify(anthropic.body).length).toBeLessThan(2_000);
    expect(JSON.stringify(t.logs.slice(before)).length).toBeLessThan(10_000);
  });
});

describe('/v1/mcp answers in the JSON-RPC envelope (finding 11)', () => {
  it.each(['put', 'patch', 'options'] as const)(
    '%s /v1/mcp is a 405 with Allow, in the JSON-RPC envelope',
    async (method) => {
      const res = await request(t.app)[method]('/v1/mcp').set('authorization', `Bearer ${t.key}`);
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('POST');
      expect(res.headers['content-type']).toMatch(/application\/json/);
      expect(res.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32601 } });
    },
  );

  it('TRACE /v1/mcp is refused in the envelope too', async () => {
    const res = await request(t.app).trace('/v1/mcp').set('authorization', `Bearer ${t.key}`);
    expect(res.status).toBe(405);
    expect(res.headers['content-type']).toMatch(/application\/json/);
  });

  it.each(['/v1/mcp/sub', '/v1/mcp/a/b'])(
    'POST %s is a 404 in the JSON-RPC envelope, echoing the request id',
    async (path) => {
      const res = await post(path).send({ jsonrpc: '2.0', id: 7, method: 'tools/list' });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32601 } });
      expect(res.headers['x-request-id']).toMatch(/^req_/);
    },
  );

  it('a body that is not JSON is a 400 with the JSON-RPC parse error -32700, not -32600', async () => {
    const res = await post('/v1/mcp')
      .set('content-type', 'application/json')
      .set('accept', 'application/json, text/event-stream')
      .send('{"jsonrpc": "2.0", "id": 1,');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
  });

  it('a JSON body that is no JSON-RPC message stays -32600', async () => {
    const res = await post('/v1/mcp')
      .set('accept', 'application/json, text/event-stream')
      .send({ id: 1, method: 'tools/list' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });
  });

  it('an unauthenticated call still gets 401 first', async () => {
    const res = await request(t.app).put('/v1/mcp');
    expect(res.status).toBe(401);
  });
});

describe('values the validator lets through', () => {
  it.each(['limit=1e999', 'limit=Infinity', 'limit=-Infinity', 'since=1e999'])(
    'GET /v1/usage?%s is a 400 naming the parameter',
    async (query) => {
      const res = await request(t.app).get(`/v1/usage?${query}`).set('authorization', `Bearer ${t.key}`);
      expectOpenAiError(res, 400, null);
      expect(res.body.error.param).toBe(query.split('=')[0]);
    },
  );

  it('a JSON-RPC id that is not a string or an integer is answered with id null', async () => {
    const res = await post('/v1/mcp/x').send({ jsonrpc: '2.0', id: 1.5, method: 'tools/list' });
    expect(res.status).toBe(404);
    expect(res.body.id).toBeNull();
  });
});
