/**
 * Large JSON bodies off the event loop (issue 28: "a body that would block the event loop for more than a few
 * milliseconds is refused, not processed"). A body of 1 MiB and more is read a chunk at a time, decoded and parsed
 * in a body thread (server/engines/body), and its base64 decoded in slices: serving the largest accepted body holds
 * the loop well under what JSON.parse and the base64 decoding of that same body cost in place, measured here as
 * the control. Malformed large bodies get express.json's answers, in the same envelopes.
 */
import { gzipSync } from 'node:zlib';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type ErrorRequestHandler } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyThreads } from '../../server/engines/body/body-pool.js';
import { createTestApp, type TestApp } from '../helpers/create-test-app.js';
import { leastOfThree } from '../helpers/loop-block.js';
import { postRaw, type RawAnswer } from '../helpers/post-raw.js';

let t: TestApp;
let server: ReturnType<TestApp['app']['listen']>;
let port: number;

beforeAll(async () => {
  t = await createTestApp({ maxBodyBytes: 25 * 1024 * 1024 });
  server = t.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const send = (path: string, body: Buffer, headers?: Record<string, string | number>) =>
  postRaw({ port, key: t.key }, path, body, headers);

const MiB = 1024 * 1024;
const base64 = Buffer.alloc(18 * MiB, 0x5a).toString('base64'); // 24 MiB, the most a 25 MiB body carries

describe('the largest accepted bodies', () => {
  it.each([
    ['transcribe_audio, 24 MiB of audio_base64', '/v1/tools/transcribe_audio', `{"audio_base64":"${base64}"}`],
    [
      'image_understanding, a 24 MiB image data URL',
      '/v1/tools/image_understanding',
      `{"prompt":"x","image_url":"data:image/png;base64,${base64}"}`,
    ],
  ])('%s: holds the loop under three quarters of parsing and decoding it in place', async (_name, path, text) => {
    const body = Buffer.from(text);
    const first = await send(path, body); // the route's validator compiles, the body thread starts
    let answer: RawAnswer | undefined;
    const hold = await leastOfThree(async () => {
      answer = await send(path, body);
    });
    const inPlace = await leastOfThree(
      () =>
        new Promise((resolve) =>
          setTimeout(() => {
            JSON.parse(body.toString('utf8'));
            resolve(Buffer.from(base64, 'base64'));
          }, 5),
        ),
    );
    // In place, the same work holds the loop twice the control or more (JSON.parse, the decoding, the rest); in
    // body threads and slices, about a third of it on the loaded 2-core machine.
    // The answers are the ones before body threads: decoded, then refused for want of a model or an image.
    expect(answer!.status, JSON.stringify(answer!.body).slice(0, 300)).toBe(first.status);
    expect([422, 503]).toContain(answer!.status);
    expect(answer!.requestId).toMatch(/^req_/);
    expect(bodyThreads()).toBeGreaterThan(0);
    expect(
      hold,
      `serving it held the loop ${hold} ms of CPU, parsing and decoding in place ${inPlace} ms`,
    ).toBeLessThan(inPlace * 0.75);
  });
});

describe('malformed large bodies keep their answers', () => {
  const chat = (tail: string) =>
    Buffer.from(`{"model":"local:chat","messages":[{"role":"user","content":"${'a'.repeat(2 * MiB)}"}]${tail}`);

  /** The message express.json itself gives for `body` (the control): a bare app with nothing else. */
  async function expressJsonMessage(body: Buffer): Promise<string> {
    const bare = express();
    bare.use(express.json({ limit: 25 * MiB }));
    bare.use(((error, _req, res, _next) => {
      res.status(400).json({ message: error.message, type: error.type });
    }) satisfies ErrorRequestHandler);
    const listening = bare.listen(0, '127.0.0.1');
    await new Promise((resolve) => listening.once('listening', resolve));
    try {
      const res = await fetch(`http://127.0.0.1:${(listening.address() as AddressInfo).port}/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: new Uint8Array(body),
      });
      const answer = (await res.json()) as { message: string; type: string };
      expect(answer.type).toBe('entity.parse.failed');
      return answer.message;
    } finally {
      listening.close();
    }
  }

  async function expectInvalidJson(answer: RawAnswer, body: Buffer): Promise<void> {
    const message = await expressJsonMessage(body);
    expect(answer.status).toBe(400);
    expect(answer.requestId).toMatch(/^req_/);
    expect(answer.body.error).toMatchObject({
      code: 'invalid_json',
      message: `The request body is not valid JSON: ${message}`,
    });
  }

  it('a syntax error: 400 invalid_json with express.json’s message', async () => {
    const body = chat(',}');
    await expectInvalidJson(await send('/v1/chat/completions', body), body);
  });

  it('a body that is not an object or array: express.json’s strict message', async () => {
    const body = Buffer.from(`  "${'a'.repeat(2 * MiB)}"`);
    await expectInvalidJson(await send('/v1/chat/completions', body), body);
  });

  it('too deep: 400 nesting_too_deep before parsing', async () => {
    const body = Buffer.from(`${'['.repeat(300)}"${'a'.repeat(2 * MiB)}"${']'.repeat(300)}`);
    const answer = await send('/v1/chat/completions', body);
    expect(answer.status).toBe(400);
    expect(answer.requestId).toMatch(/^req_/);
    expect(answer.body.error.code).toBe('nesting_too_deep');
  });

  it('a compressed body is parsed in a thread too, and a malformed one answered the same', async () => {
    const good = chat('}');
    const served = await send('/v1/chat/completions', gzipSync(good), { 'content-encoding': 'gzip' });
    expect(served.status, JSON.stringify(served.body).slice(0, 300)).toBe(200);
    const bad = chat(',}');
    const refused = await send('/v1/chat/completions', gzipSync(bad), { 'content-encoding': 'gzip' });
    await expectInvalidJson(refused, bad);
  });

  it('a client that goes away halfway leaves the server serving', async () => {
    await new Promise<void>((resolve) => {
      const req = httpRequest({
        host: '127.0.0.1',
        port,
        path: '/v1/chat/completions',
        method: 'POST',
        headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json', 'content-length': 4 * MiB },
      });
      req.on('error', () => resolve());
      req.write(chat('}').subarray(0, MiB), () => {
        setTimeout(() => {
          req.destroy();
          resolve();
        }, 50);
      });
    });
    const answer = await send('/v1/chat/completions', chat('}'));
    expect(answer.status).toBe(200);
  });
});
