/**
 * Request ids and usage records: every response carries its id, every authenticated call writes exactly one
 * usage record named by that id, and GET /v1/usage shows a key its own records only, filtered and paged.
 */
import { request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { countTextTokens, splitIntoTokens } from '../../server/tokens/tokenizer.js';
import { expectOpenAIError, expectRequestId, usageOf } from '../helpers/contract-assertions.js';
import { createTestApp } from '../helpers/create-test-app.js';
import { readSse } from '../helpers/read-sse.js';
import { assertMatchesSchema } from '../helpers/spec-schemas.js';

const T0 = 1_767_225_600_000;

/** Prompt tokens of a one-user-message chat: 3 to prime the reply, 3 for the message, its role and text. */
async function promptTokens(text: string): Promise<number> {
  return 3 + 3 + (await countTextTokens('user')) + (await countTextTokens(text));
}

function chat(model: string, text: string, extra: Record<string, unknown> = {}) {
  return { model, messages: [{ role: 'user', content: text }], ...extra };
}

function sortedKeys(value: object): string[] {
  return Object.keys(value).sort();
}

describe('request ids', () => {
  it('gives every response its own id, equal in x-svc-request-id and x-request-id: 200, 401, 404 and 500', async () => {
    const { app, key, db } = await createTestApp();
    const auth = { authorization: `Bearer ${key}` };
    const ok = await request(app).get('/v1/models').set(auth);
    const unauthorised = await request(app).get('/v1/models');
    const missing = await request(app).get('/v1/nowhere').set(auth);
    const created = await request(app).post('/v1/responses').set(auth).send({ model: 'local:chat', input: 'hi' });
    db.prepare(`UPDATE responses SET response = json_set(response, '$.object', 'not-a-response')`).run();
    const broken = await request(app).get(`/v1/responses/${created.body.id}`).set(auth);
    expect([ok.status, unauthorised.status, missing.status, broken.status]).toEqual([200, 401, 404, 500]);
    const ids = [ok, unauthorised, missing, created, broken].map((res) => expectRequestId(res));
    expect(new Set(ids).size).toBe(5);
  });

  it('ignores a request id sent by the client', async () => {
    const { app, key } = await createTestApp();
    const res = await request(app)
      .get('/v1/models')
      .set('authorization', `Bearer ${key}`)
      .set('x-request-id', 'req_chosen_by_client');
    expect(res.status).toBe(200);
    expect(expectRequestId(res)).not.toBe('req_chosen_by_client');
  });

  it('puts the id on streamed chat completions', async () => {
    const { app, key } = await createTestApp();
    const res = await request(app)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${key}`)
      .send(chat('local:chat', 'hi', { stream: true }));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    const id = expectRequestId(res);
    const records = await usageOf(app, key, id);
    expect(records.map((record) => record.request_id)).toEqual([id]);
  });

  it('puts the id on streamed Responses', async () => {
    const { app, key } = await createTestApp();
    const res = await request(app)
      .post('/v1/responses')
      .set('authorization', `Bearer ${key}`)
      .send({ model: 'local:chat', input: 'hi', stream: true });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    const _id = expectRequestId(res);
    expect(readSse(res.text).at(-1)?.event).toBe('response.completed');
  });
});

describe('usage records', () => {
  it('writes one record per call with operation, requested and resolved model, provider, tokens, status and latency', async () => {
    const { app, key, keys } = await createTestApp({ now: () => T0 });
    const text = 'Count my tokens, please.';
    const res = await request(app)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${key}`)
      .send(chat('reference', text));
    expect(res.status).toBe(200);
    const id = expectRequestId(res);
    const list = await request(app).get('/v1/usage').query({ request_id: id }).set('authorization', `Bearer ${key}`);
    expect(list.status).toBe(200);
    expectRequestId(list);
    assertMatchesSchema('UsageRecordList', list.body);
    const output = (await splitIntoTokens(`You said: ${text}`)).length;
    expect(list.body).toEqual({
      object: 'list',
      data: [
        {
          id: 'usage_1',
          object: 'usage.record',
          request_id: id,
          key_id: (await keys.list())[0].id,
          operation: 'createChatCompletion',
          model_requested: 'reference',
          model: 'local:chat',
          provider: 'local',
          input_tokens: await promptTokens(text),
          output_tokens: output,
          cached_input_tokens: 0,
          cache_write_tokens: 0,
          reasoning_tokens: 0,
          units: null,
          media: null,
          // A built-in model costs nothing (limits/prices.ts).
          cost_usd: 0,
          deployment: null,
          attempts: null,
          search_deployment: null,
          search_attempts: null,
          status: 200,
          latency_ms: 0,
          created_at: T0 / 1000,
        },
      ],
      first_id: 'usage_1',
      last_id: 'usage_1',
      has_more: false,
    });
    expect(res.body.usage).toEqual({
      prompt_tokens: await promptTokens(text),
      completion_tokens: output,
      total_tokens: (await promptTokens(text)) + output,
      completion_tokens_details: { reasoning_tokens: 0 },
    });
  });

  it('measures latency with the real clock', async () => {
    const { app, key } = await createTestApp();
    const before = Date.now();
    const res = await request(app)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${key}`)
      .send(chat('local:chat', 'hi'));
    const elapsed = Date.now() - before;
    const [record] = await usageOf(app, key, expectRequestId(res));
    expect(Number.isInteger(record.latency_ms)).toBe(true);
    expect(record.latency_ms as number).toBeGreaterThanOrEqual(0);
    expect(record.latency_ms as number).toBeLessThanOrEqual(elapsed);
    expect(record.created_at).toBeGreaterThanOrEqual(Math.floor(before / 1000));
  });

  it('records failed calls too: an unknown model with its requested name and no resolved model', async () => {
    const { app, key } = await createTestApp({ now: () => T0 });
    const res = await request(app)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${key}`)
      .send(chat('gemini-9', 'hi'));
    expect(res.status).toBe(404);
    const id = expectRequestId(res);
    const records = await usageOf(app, key, id);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      request_id: id,
      operation: 'createChatCompletion',
      model_requested: 'gemini-9',
      model: null,
      provider: null,
      input_tokens: 0,
      output_tokens: 0,
      status: 404,
      latency_ms: 0,
    });
  });

  it('records calls of every operation under its operationId', async () => {
    const { app, key } = await createTestApp({ now: () => T0 });
    const auth = { authorization: `Bearer ${key}` };
    const models = await request(app).get('/v1/models').set(auth);
    const unknownPath = await request(app).get('/v1/nowhere').set(auth);
    const response = await request(app).post('/v1/responses').set(auth).send({ model: 'local-chat', input: 'hi' });
    const count = await request(app)
      .post('/anthropic/v1/messages/count_tokens')
      .set('x-api-key', key)
      .send(chat('local:chat', 'hi'));
    const expected = [
      [models, 'listModels', null, 200],
      [unknownPath, 'unknown', null, 404],
      [response, 'createResponse', 'local-chat', 200],
      [count, 'countMessageTokens', 'local:chat', 200],
    ] as const;
    for (const [res, operation, modelRequested, status] of expected) {
      const records = await usageOf(app, key, expectRequestId(res, res === count ? 'anthropic' : 'openai'));
      expect(records).toHaveLength(1);
      expect(records[0]).toMatchObject({ operation, model_requested: modelRequested, status });
    }
  });

  it('records a streamed call once, with the final usage of the stream', async () => {
    const { app, key } = await createTestApp({ now: () => T0 });
    const text = 'Stream this back to me.';
    const res = await request(app)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${key}`)
      .send(chat('local-chat', text, { stream: true }));
    expect(res.status).toBe(200);
    const id = expectRequestId(res);
    const records = await usageOf(app, key, id);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      request_id: id,
      operation: 'createChatCompletion',
      model_requested: 'local-chat',
      model: 'local:chat',
      provider: 'local',
      input_tokens: await promptTokens(text),
      output_tokens: (await splitIntoTokens(`You said: ${text}`)).length,
      reasoning_tokens: 0,
      status: 200,
    });
  });

  it('records a stream whose client disconnected after the first chunk, with status 499 and what was produced', async () => {
    const { app, key } = await createTestApp();
    const server: Server = await new Promise((resolve) => {
      const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
    });
    try {
      const { port } = server.address() as AddressInfo;
      // A long prompt makes a long echo: tens of thousands of tokens, so the stream is still running when we leave.
      const text = 'word '.repeat(20_000).trim();
      const body = JSON.stringify(chat('local:chat', text, { stream: true }));
      const { requestId, firstChunk } = await new Promise<{ requestId: string; firstChunk: string }>(
        (resolve, reject) => {
          const req = httpRequest(
            {
              host: '127.0.0.1',
              port,
              path: '/v1/chat/completions',
              method: 'POST',
              headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            },
            (res: IncomingMessage) => {
              expect(res.statusCode).toBe(200);
              res.once('data', (chunk: Buffer) => {
                req.destroy();
                resolve({ requestId: res.headers['x-svc-request-id'] as string, firstChunk: chunk.toString('utf8') });
              });
            },
          );
          req.on('error', (error) => {
            if ((error as NodeJS.ErrnoException).code !== 'ECONNRESET') {
              reject(error);
            }
          });
          req.end(body);
        },
      );
      expect(requestId).toMatch(/^req_[0-9a-f]{32}$/);
      expect(firstChunk.startsWith('data: {')).toBe(true);

      const records = await usageOf(app, key, requestId, 10_000);
      expect(records).toHaveLength(1);
      const fullOutput = (await splitIntoTokens(`You said: ${text}`)).length;
      expect(records[0]).toMatchObject({
        request_id: requestId,
        operation: 'createChatCompletion',
        model_requested: 'local:chat',
        model: 'local:chat',
        provider: 'local',
        input_tokens: await promptTokens(text),
        status: 499,
      });
      expect(records[0].output_tokens as number).toBeGreaterThan(0);
      expect(records[0].output_tokens as number).toBeLessThan(fullOutput);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('streams cut by a server shutdown', () => {
  it('ends the stream with a shutting_down error frame and records it with status 503', async () => {
    const { app, key, shutdown } = await createTestApp();
    const server: Server = await new Promise((resolve) => {
      const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
    });
    try {
      const { port } = server.address() as AddressInfo;
      const text = 'word '.repeat(20_000).trim();
      const { requestId, body } = await new Promise<{ requestId: string; body: string }>((resolve, reject) => {
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port,
            path: '/v1/chat/completions',
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          },
          (res: IncomingMessage) => {
            let received = '';
            res.setEncoding('utf8');
            res.on('data', (piece: string) => {
              received += piece;
              if (!shutdown.signal.aborted) {
                shutdown.abort(new Error('server shutting down'));
              }
            });
            res.on('end', () => resolve({ requestId: res.headers['x-svc-request-id'] as string, body: received }));
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify(chat('local:chat', text, { stream: true })));
      });
      const events = readSse(body);
      expect(events.map((event) => event.data)).not.toContain('[DONE]');
      const last = JSON.parse(events.at(-1)!.data) as unknown;
      assertMatchesSchema('ChatCompletionStreamError', last);
      expect(last).toEqual({
        error: {
          message: 'The server is shutting down.',
          type: 'service_unavailable_error',
          param: null,
          code: 'shutting_down',
        },
      });
      for (const event of events.slice(0, -1)) {
        assertMatchesSchema('ChatCompletionChunk', JSON.parse(event.data));
      }
      const records = await usageOf(app, key, requestId);
      expect(records).toHaveLength(1);
      expect(records[0]).toMatchObject({
        request_id: requestId,
        operation: 'createChatCompletion',
        model: 'local:chat',
        input_tokens: await promptTokens(text),
        status: 503,
      });
      expect(records[0].output_tokens as number).toBeGreaterThan(0);
      expect(records[0].output_tokens as number).toBeLessThan((await splitIntoTokens(`You said: ${text}`)).length);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('GET /v1/usage', () => {
  it('shows each key only its own records', async () => {
    const { app, key, keys } = await createTestApp({ now: () => T0 });
    const other = await keys.create({ name: 'other' });
    const mine = await request(app)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${key}`)
      .send(chat('local:chat', 'mine'));
    const theirs = await request(app)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${other.key}`)
      .send(chat('reference', 'theirs'));
    const mineId = expectRequestId(mine);
    const theirsId = expectRequestId(theirs);

    const myList = await request(app).get('/v1/usage').set('authorization', `Bearer ${key}`);
    expect(myList.status).toBe(200);
    expect(myList.body.data.map((record: { request_id: string }) => record.request_id)).toEqual([mineId]);
    expect(myList.body.data[0].key_id).toBe((await keys.list()).find((record) => record.name === 'test')?.id);

    const theirList = await request(app)
      .get('/v1/usage')
      .query({ model: 'local:chat' })
      .set('authorization', `Bearer ${other.key}`);
    expect(theirList.body.data.map((record: { request_id: string }) => record.request_id)).toEqual([theirsId]);
    expect(theirList.body.data[0].key_id).toBe(other.record.id);

    // Another key's request id reads as absent.
    const peek = await request(app)
      .get('/v1/usage')
      .query({ request_id: theirsId })
      .set('authorization', `Bearer ${key}`);
    expect(peek.status).toBe(200);
    expect(peek.body).toEqual({ object: 'list', data: [], first_id: null, last_id: null, has_more: false });
  });

  it('filters by model, matching the requested or the resolved name', async () => {
    const { app, key } = await createTestApp({ now: () => T0 });
    const auth = { authorization: `Bearer ${key}` };
    const viaAlias = expectRequestId(
      await request(app).post('/v1/chat/completions').set(auth).send(chat('reference', 'a')),
    );
    const viaId = expectRequestId(
      await request(app).post('/v1/chat/completions').set(auth).send(chat('local:chat', 'b')),
    );
    await request(app).get('/v1/models').set(auth);
    const ids = async (model: string) =>
      (await request(app).get('/v1/usage').query({ model }).set(auth)).body.data.map(
        (record: { request_id: string }) => record.request_id,
      );
    expect(await ids('reference')).toEqual([viaAlias]);
    expect(await ids('local:chat')).toEqual([viaId, viaAlias]);
    expect(await ids('local-chat')).toEqual([]);
  });

  it('filters by time: since is inclusive, until exclusive', async () => {
    let clock = 1_000_000;
    const { app, key } = await createTestApp({ now: () => clock });
    const auth = { authorization: `Bearer ${key}` };
    const ids: string[] = [];
    for (const at of [1_000_000, 2_000_000, 3_000_000]) {
      clock = at;
      ids.push(
        expectRequestId(
          await request(app)
            .post('/v1/chat/completions')
            .set(auth)
            .send(chat('local:chat', `at ${at}`)),
        ),
      );
    }
    clock = 9_000_000;
    const window = async (query: Record<string, number>) => {
      const res = await request(app).get('/v1/usage').query(query).set(auth);
      expect(res.status).toBe(200);
      return res.body.data.map((record: { request_id: string; created_at: number }) => [
        record.request_id,
        record.created_at,
      ]);
    };
    expect(await window({ since: 2000, until: 9000 })).toEqual([
      [ids[2], 3000],
      [ids[1], 2000],
    ]);
    expect(await window({ since: 1000, until: 3000 })).toEqual([
      [ids[1], 2000],
      [ids[0], 1000],
    ]);
    expect(await window({ since: 3000, until: 3001 })).toEqual([[ids[2], 3000]]);
    expect(await window({ until: 1000 })).toEqual([]);
  });

  it('pages with limit and after, newest first by default, oldest first with order=asc', async () => {
    const { app, key } = await createTestApp({ now: () => T0 });
    const auth = { authorization: `Bearer ${key}` };
    const calls: string[] = [];
    for (let index = 0; index < 5; index += 1) {
      calls.push(
        expectRequestId(
          await request(app)
            .post('/v1/chat/completions')
            .set(auth)
            .send(chat('local:chat', `call ${index}`)),
        ),
      );
    }
    const page = async (query: Record<string, string | number>) => {
      const res = await request(app)
        .get('/v1/usage')
        .query({ model: 'local:chat', limit: 2, ...query })
        .set(auth);
      expect(res.status).toBe(200);
      assertMatchesSchema('UsageRecordList', res.body);
      const data = res.body.data as Array<{ id: string; request_id: string }>;
      expect(res.body.first_id).toBe(data[0]?.id ?? null);
      expect(res.body.last_id).toBe(data.at(-1)?.id ?? null);
      return {
        requestIds: data.map((record) => record.request_id),
        lastId: res.body.last_id as string,
        hasMore: res.body.has_more as boolean,
      };
    };

    const desc1 = await page({});
    expect(desc1).toMatchObject({ requestIds: [calls[4], calls[3]], hasMore: true });
    const desc2 = await page({ after: desc1.lastId });
    expect(desc2).toMatchObject({ requestIds: [calls[2], calls[1]], hasMore: true });
    const desc3 = await page({ after: desc2.lastId });
    expect(desc3).toMatchObject({ requestIds: [calls[0]], hasMore: false });

    const asc1 = await page({ order: 'asc' });
    expect(asc1).toMatchObject({ requestIds: [calls[0], calls[1]], hasMore: true });
    const asc2 = await page({ order: 'asc', after: asc1.lastId });
    expect(asc2).toMatchObject({ requestIds: [calls[2], calls[3]], hasMore: true });
    const asc3 = await page({ order: 'asc', after: asc2.lastId });
    expect(asc3).toMatchObject({ requestIds: [calls[4]], hasMore: false });

    const exact = await page({ limit: 5 });
    expect(exact).toMatchObject({ requestIds: [...calls].reverse(), hasMore: false });
  });

  it('answers an empty page with null ids', async () => {
    const { app, key } = await createTestApp();
    const res = await request(app).get('/v1/usage').set('authorization', `Bearer ${key}`);
    expect(res.status).toBe(200);
    expectRequestId(res);
    expect(res.body).toEqual({ object: 'list', data: [], first_id: null, last_id: null, has_more: false });
    expect(sortedKeys(res.body)).toEqual(['data', 'first_id', 'has_more', 'last_id', 'object']);
  });

  it.each([
    [{ limit: 0 }, 'limit', '/query/limit must be >= 1'],
    [{ limit: 101 }, 'limit', '/query/limit must be <= 100'],
    [{ order: 'sideways' }, 'order', '/query/order must be equal to one of the allowed values: asc, desc'],
    [{ since: 'yesterday' }, 'since', '/query/since must be integer'],
    [{ colour: 'blue' }, 'colour', "/query/colour Unknown query parameter 'colour'"],
  ])('answers 400 naming the query parameter for %o', async (query, param, message) => {
    const { app, key } = await createTestApp();
    const res = await request(app).get('/v1/usage').query(query).set('authorization', `Bearer ${key}`);
    expect(res.status).toBe(400);
    expectRequestId(res);
    expectOpenAIError(res.body, { message, type: 'invalid_request_error', param, code: null });
  });
});
