/**
 * A client that closes a download before the last byte is written (a player seeking away, `curl | head`) is a
 * client abort: logged at info with 499, never an error with a stack, and its usage record says 499, not 200.
 */
import { randomBytes } from 'node:crypto';
import { get } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/create-test-app.js';

let t: TestApp;
let server: ReturnType<TestApp['app']['listen']>;

beforeAll(async () => {
  t = await createTestApp();
  server = t.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

it('a download closed by the client after its first bytes is a 499 at info, not a 500 with a stack', async () => {
  // Big enough that the answer takes many writes: the client leaves while the server is still sending.
  const upload = await request(t.app)
    .post('/v1/files')
    .set('authorization', `Bearer ${t.key}`)
    .field('purpose', 'assistants')
    .attach('file', randomBytes(8 * 1024 * 1024), { filename: 'big.bin', contentType: 'application/octet-stream' });
  expect(upload.status, JSON.stringify(upload.body)).toBe(200);
  const { port } = server.address() as AddressInfo;
  const requestId = await new Promise<string>((resolve, reject) => {
    const req = get(
      {
        host: '127.0.0.1',
        port,
        path: `/v1/files/${upload.body.id}/content`,
        headers: { authorization: `Bearer ${t.key}` },
      },
      (res) => {
        expect(res.statusCode).toBe(200);
        res.once('data', () => {
          req.destroy();
          resolve(res.headers['x-request-id'] as string);
        });
      },
    );
    req.on('error', (error) => (error.message === 'socket hang up' ? undefined : reject(error)));
  });
  await expect
    .poll(() => t.logs.some((line) => line.requestId === requestId && line.msg === 'request'), { timeout: 10_000 })
    .toBe(true);
  // The pipeline's rejection reaches the error handler a moment after the access line.
  await expect
    .poll(() => t.logs.some((line) => line.requestId === requestId && line.status === 499), { timeout: 10_000 })
    .toBe(true);
  const lines = t.logs.filter((line) => line.requestId === requestId);
  expect(
    lines.filter((line) => (line.level as number) >= 50),
    JSON.stringify(lines),
  ).toEqual([]);
  expect(lines.find((line) => line.status === 499)).toMatchObject({ level: 30, code: 'client_closed_request' });
  await t.usage.flush();
  const usage = await request(t.app).get(`/v1/usage?request_id=${requestId}`).set('authorization', `Bearer ${t.key}`);
  expect(usage.body.data).toEqual([expect.objectContaining({ request_id: requestId, status: 499 })]);
});
