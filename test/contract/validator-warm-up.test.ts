/**
 * The validator warmed at start (http/validator-warm-up.ts): the first call of an operation after a start costs
 * about what a later call costs, instead of the build of its validators. Compared in CPU time (this thread's),
 * with a cold app built in the same test as the baseline.
 */
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { warmUpValidator } from '../../server/app.js';
import { createTestApp, type TestApp } from '../helpers/create-test-app.js';
import { threadCpuMs } from '../helpers/cpu-time.js';

const message = { model: 'local:chat', max_tokens: 16, messages: [{ role: 'user', content: 'hello' }] };

/**
 * A call the validator does not see (MCP is outside its paths) that meets the app's other first-call costs: the
 * key's verification, the call record and the usage writer.
 */
async function primeOutsideTheValidator(made: TestApp): Promise<void> {
  const res = await request(made.app)
    .post('/v1/mcp')
    .set('authorization', `Bearer ${made.key}`)
    .set('accept', 'application/json, text/event-stream')
    .send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'warm-up test', version: '1' } },
    });
  expect(res.status).toBe(200);
}

async function firstCallCpuMs(made: TestApp): Promise<number> {
  const before = threadCpuMs();
  const res = await request(made.app)
    .post('/anthropic/v1/messages')
    .set('authorization', `Bearer ${made.key}`)
    .send(message);
  const spent = threadCpuMs() - before;
  expect(res.status).toBe(200);
  expect(res.body.type).toBe('message');
  return spent;
}

describe('the validator warmed at start', () => {
  it('builds every JSON operation, so that the first Anthropic call costs a fraction of a cold one', async () => {
    const cold = await createTestApp();
    const warm = await createTestApp();
    const report = await warmUpValidator(warm.app);
    await primeOutsideTheValidator(cold);
    await primeOutsideTheValidator(warm);
    // Every operation of the contract but MCP's (JSON, multipart, or no body).
    expect(report.operations).toBeGreaterThan(50);
    const coldMs = await firstCallCpuMs(cold);
    const warmMs = await firstCallCpuMs(warm);
    // A later call of the cold app, the floor the warm one should be near.
    const againMs = await firstCallCpuMs(cold);
    expect(warmMs, `cold ${coldMs} ms, warm ${warmMs} ms, again ${againMs} ms`).toBeLessThan(coldMs / 4);
    await cold.services.close();
    await warm.services.close();
  }, 60_000);

  it('builds the multipart operations too, without storing anything: the first upload costs a fraction of a cold one', async () => {
    const cold = await createTestApp();
    const warm = await createTestApp();
    await warmUpValidator(warm.app);
    await primeOutsideTheValidator(cold);
    await primeOutsideTheValidator(warm);
    const auth = { authorization: `Bearer ${warm.key}` };
    // The warm-up's forms carry no file: nothing was stored.
    const listed = await request(warm.app).get('/v1/files').set(auth);
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([]);
    const firstUploadCpuMs = async (made: TestApp) => {
      const before = threadCpuMs();
      const res = await request(made.app)
        .post('/v1/files')
        .set('authorization', `Bearer ${made.key}`)
        .field('purpose', 'assistants')
        .attach('file', Buffer.from('warm words'), 'note.txt');
      const spent = threadCpuMs() - before;
      expect(res.status).toBe(200);
      expect(res.body.object).toBe('file');
      return spent;
    };
    const coldMs = await firstUploadCpuMs(cold);
    const warmMs = await firstUploadCpuMs(warm);
    expect(warmMs, `cold ${coldMs} ms, warm ${warmMs} ms`).toBeLessThan(coldMs / 3);
    await cold.services.close();
    await warm.services.close();
  }, 60_000);

  it('still validates after warming: a bad body is refused, a good one answered', async () => {
    const made = await createTestApp();
    await warmUpValidator(made.app);
    const auth = { authorization: `Bearer ${made.key}` };
    const bad = await request(made.app).post('/anthropic/v1/messages').set(auth).send({ model: 'local:chat' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('max_tokens');
    const good = await request(made.app).get('/v1/models').set(auth);
    expect(good.status).toBe(200);
    expect(good.body.data.length).toBeGreaterThan(0);
    await made.services.close();
  }, 60_000);
});
