import { randomUUID } from 'node:crypto';
import type { Express } from 'express';
import { Redis } from 'ioredis';
import request from 'supertest';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../server/app.js';
import type { LimitSettings, ProviderConfig } from '../../server/config.js';
import type { Limits } from '../../server/core/limits.js';
import type { LimitsSource } from '../../server/limits/call-limiter.js';
import { openLimits } from '../../server/limits/open-limits.js';
import { loadSpec } from '../../server/spec/load-spec.js';
import { sendJson } from '../fakes/answers.js';
import { startFakeUpstream, type FakeUpstream } from '../fakes/fake-upstream.js';
import { createTestApp, type TestApp } from '../helpers/create-test-app.js';
import { mcpToolCall } from '../helpers/mcp-tool-call.js';
import { redisServerInstalled, startOwnRedis } from '../helpers/own-redis.js';

const SHARED_REDIS = 'redis://127.0.0.1:6379';

async function reachable(url: string): Promise<boolean> {
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

const hasRedis = await reachable(SHARED_REDIS);
if (!hasRedis && process.env.CI === 'true') {
  throw new Error('Redis is not reachable on 127.0.0.1:6379 (CI=true: the shared-counter tests must run)');
}

const prefixes: string[] = [];
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) {
    await cleanup();
  }
});
afterAll(async () => {
  if (!hasRedis) {
    return;
  }
  const client = new Redis(SHARED_REDIS);
  for (const prefix of prefixes) {
    const keys = await client.keys(`${prefix}*`);
    if (keys.length > 0) {
      await client.del(...keys);
    }
  }
  client.disconnect();
});

function settings(redisUrl: string | undefined, onStoreDown: 'allow' | 'deny' = 'allow'): LimitSettings {
  return { defaults: {}, onStoreDown, leaseMs: 60_000, redisUrl };
}

/** Every key gets `limits` (the admin API's per-key limits stand-in). */
function everyKey(limits: Limits): LimitsSource {
  return { limitsFor: () => ({ key: limits }) };
}

function fakeProvider(origin: string): ProviderConfig {
  return {
    id: 'fake',
    type: 'openai-compatible',
    base_url: `${origin}/v1`,
    timeout_ms: 5000,
    max_connections: 64,
    headers: {},
    responses: 'translate',
  };
}

interface Pair {
  first: TestApp;
  second: Express;
}

/** Two instances on one Redis: the test app and a second app over the same stores with a limiter of its own. */
async function twoInstances(options: {
  limits: Limits;
  providers?: ProviderConfig[];
  prices?: Record<string, { input?: number; output?: number }>;
  now?: () => number;
}): Promise<Pair> {
  const prefix = `omnigate-test:${randomUUID()}:`;
  prefixes.push(prefix);
  const source = everyKey(options.limits);
  const first = await createTestApp({
    providers: options.providers,
    prices: options.prices,
    limits: settings(SHARED_REDIS),
    limitsSource: source,
    redisPrefix: prefix,
    now: options.now,
  });
  const secondLimits = openLimits({
    settings: settings(SHARED_REDIS),
    prices: options.prices ?? {},
    registry: first.registry,
    providerUrls: {},
    logger: first.services.appDeps.logger,
    source,
    redisPrefix: prefix,
    now: options.now,
  });
  const second = createApp({
    ...first.services.appDeps,
    limiter: secondLimits.limiter,
    costOf: secondLimits.costOf,
    spec: loadSpec(),
    maxBodyBytes: 1024 * 1024,
    now: options.now,
  });
  cleanups.push(async () => {
    await secondLimits.close();
    await first.services.close();
  });
  return { first, second };
}

const listModels = (app: Express, key: string) => request(app).get('/v1/models').set('authorization', `Bearer ${key}`);

describe.skipIf(!hasRedis)('limits shared by two instances through Redis', () => {
  it('admits exactly 30 of 100 concurrent calls of a key limited to 30 a minute', async () => {
    const { first, second } = await twoInstances({ limits: { rpm: 30 } });
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) => listModels(i % 2 === 0 ? first.app : second, first.key)),
    );
    const admitted = answers.filter((answer) => answer.status === 200);
    const refused = answers.filter((answer) => answer.status === 429);
    expect(admitted).toHaveLength(30);
    expect(refused).toHaveLength(70);
    // Each instance got 50 calls, so counters of their own would have admitted up to 60.
    for (const answer of refused) {
      expect(answer.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
      expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
      expect(answer.headers['x-ratelimit-remaining-requests']).toBe('0');
    }
  });

  it('puts the right headers on the last admitted and the first refused call', async () => {
    const { first, second } = await twoInstances({ limits: { rpm: 3, tpm: 1_000_000 } });
    const answers = [];
    for (let i = 0; i < 4; i++) {
      answers.push(
        await request(i % 2 === 0 ? first.app : second)
          .post('/v1/chat/completions')
          .set('authorization', `Bearer ${first.key}`)
          .send({ model: 'local:chat', max_tokens: 20, messages: [{ role: 'user', content: 'Hello there' }] }),
      );
    }
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 429]);
    const [lastAdmitted, firstRefused] = [answers[2]!, answers[3]!];
    expect(lastAdmitted.headers['x-ratelimit-limit-requests']).toBe('3');
    expect(lastAdmitted.headers['x-ratelimit-remaining-requests']).toBe('0');
    expect(lastAdmitted.headers['x-ratelimit-reset-requests']).toMatch(/^\d+(\.\d+)?m?s$|^\d+m\d+s$/);
    expect(lastAdmitted.headers['x-ratelimit-limit-tokens']).toBe('1000000');
    expect(Number(lastAdmitted.headers['x-ratelimit-remaining-tokens'])).toBeLessThan(1_000_000);
    expect(lastAdmitted.headers['x-ratelimit-reset-tokens']).toBeDefined();
    expect(firstRefused.headers['x-ratelimit-limit-requests']).toBe('3');
    expect(firstRefused.headers['x-ratelimit-remaining-requests']).toBe('0');
    expect(Number(firstRefused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(firstRefused.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(firstRefused.headers['x-svc-request-id']).toBeDefined();
    expect(firstRefused.body.error.code).toBe('rate_limit_exceeded');
  });

  it('resets the minute on time (a clock the test moves)', async () => {
    let now = Date.UTC(2026, 10, 27, 12, 0, 0);
    const { first, second } = await twoInstances({ limits: { rpm: 2 }, now: () => now });
    expect((await listModels(first.app, first.key)).status).toBe(200);
    expect((await listModels(second, first.key)).status).toBe(200);
    const refused = await listModels(first.app, first.key);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('60');
    now += 59_000;
    expect((await listModels(second, first.key)).status).toBe(429);
    now += 1_001;
    expect((await listModels(second, first.key)).status).toBe(200);
  });

  it('keeps spend within the budget plus one call estimate, then answers insufficient_quota', async () => {
    // 10 prompt + 1000 completion tokens at $1 / $4 per 1M: $0.00401 a call, under its estimate of
    // ~(body bytes / 4) × $1/1M + 1000 × $4/1M.
    const upstream: FakeUpstream = await startFakeUpstream((_request, res) =>
      sendJson(
        res,
        200,
        JSON.stringify({
          id: 'c1',
          object: 'chat.completion',
          created: 1,
          model: 'm',
          choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 10, completion_tokens: 1000, total_tokens: 1010 },
        }),
      ),
    );
    cleanups.push(() => upstream.close());
    const { first, second } = await twoInstances({
      limits: { budgetUsd: 0.01, budgetPeriod: 'day' },
      providers: [fakeProvider(upstream.origin)],
      prices: { 'fake:m': { input: 1, output: 4 } },
    });
    const body = { model: 'fake:m', max_tokens: 1000, messages: [{ role: 'user', content: 'Count to three.' }] };
    const call = (app: Express) =>
      request(app).post('/v1/chat/completions').set('authorization', `Bearer ${first.key}`).send(body);
    const burst = await Promise.all(Array.from({ length: 8 }, (_, i) => call(i % 2 === 0 ? first.app : second)));
    const later = [];
    for (let i = 0; i < 4; i++) {
      later.push(await call(i % 2 === 0 ? first.app : second));
    }
    const all = [...burst, ...later];
    expect(all.map((answer) => answer.status).filter((status) => status !== 200 && status !== 429)).toEqual([]);
    const admitted = all.filter((answer) => answer.status === 200).length;
    expect(admitted).toBeGreaterThanOrEqual(2);
    const estimate = (JSON.stringify(body).length / 4) * 1e-6 + 1000 * 4e-6;
    const { data } = (
      await request(first.app).get('/v1/usage').set('authorization', `Bearer ${first.key}`).query({ limit: 100 })
    ).body as { data: Array<{ cost_usd: number; status: number }> };
    const spent = data.reduce((sum, record) => sum + record.cost_usd, 0);
    expect(data.filter((record) => record.status === 200)).toHaveLength(admitted);
    expect(data.find((record) => record.status === 200)?.cost_usd).toBeCloseTo(0.00401, 9);
    expect(spent).toBeLessThanOrEqual(0.01 + estimate + 1e-12);
    const refused = all.find((answer) => answer.status === 429)!;
    expect(refused.body.error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota' });
    expect(refused.headers['x-should-retry']).toBe('false');
    // The upstream saw only the admitted calls.
    expect(upstream.requests).toHaveLength(admitted);
  });
});

describe('limits in each dialect (in-process counters)', () => {
  async function oneApp(limits: Limits): Promise<TestApp> {
    const app = await createTestApp({ limits: settings(undefined), limitsSource: everyKey(limits) });
    cleanups.push(() => app.services.close());
    return app;
  }

  it('refuses Anthropic Messages in the Anthropic envelope, and count_tokens counts as a request', async () => {
    const testApp = await oneApp({ rpm: 2 });
    const counted = await request(testApp.app)
      .post('/anthropic/v1/messages/count_tokens')
      .set('x-api-key', testApp.key)
      .send({ model: 'local:chat', messages: [{ role: 'user', content: 'Hi' }] });
    expect(counted.status).toBe(200);
    expect(counted.headers['x-ratelimit-remaining-requests']).toBe('1');
    const send = () =>
      request(testApp.app)
        .post('/anthropic/v1/messages')
        .set('x-api-key', testApp.key)
        .send({ model: 'local:chat', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'Hi' }] });
    expect((await send()).status).toBe(200);
    const refused = await send();
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
    expect(refused.headers['retry-after']).toBeDefined();
  });

  it('answers a refused MCP tool call with an isError result, and does not limit initialize or tools/list', async () => {
    const testApp = await oneApp({ rpm: 1 });
    const list = () =>
      request(testApp.app)
        .post('/v1/mcp')
        .set('authorization', `Bearer ${testApp.key}`)
        .set('accept', 'application/json, text/event-stream')
        .set('mcp-protocol-version', '2025-11-25')
        .send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect((await list()).status).toBe(200);
    expect((await list()).status).toBe(200);
    const ok = await mcpToolCall(testApp.app, testApp.key, 'chat', { prompt: 'Hello' });
    expect(ok.isError).toBeFalsy();
    const refused = await mcpToolCall(testApp.app, testApp.key, 'chat', { prompt: 'Hello' });
    expect(refused.isError).toBe(true);
    expect(refused.content[0]?.text).toMatch(/Rate limit reached.*\[429 rate_limit_exceeded\]/);
  });

  it('limits media units per day on images', async () => {
    const testApp = await oneApp({ mediaUnitsPerDay: 2 });
    const image = (n: number) =>
      request(testApp.app)
        .post('/v1/images/generations')
        .set('authorization', `Bearer ${testApp.key}`)
        .send({ model: 'local:image', prompt: 'a hill', n, size: '256x256', response_format: 'b64_json' });
    expect((await image(2)).status).toBe(200);
    const refused = await image(1);
    expect(refused.status).toBe(429);
    expect(refused.body.error.message).toMatch(/media units per day/);
  });

  it('holds a concurrency slot for a stream until it ends', async () => {
    const testApp = await oneApp({ maxParallel: 1 });
    const first = request(testApp.app)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${testApp.key}`)
      .send({ model: 'local:chat', stream: true, messages: [{ role: 'user', content: 'Tell me a long story.' }] });
    const [a, b] = await Promise.all([
      first,
      request(testApp.app).get('/v1/models').set('authorization', `Bearer ${testApp.key}`),
    ]);
    // One of the two overlapped the other: exactly one was refused, or both ran one after the other.
    expect([a.status, b.status].filter((status) => status === 200).length).toBeGreaterThanOrEqual(1);
    // Once both ended, the slot is free again.
    expect((await request(testApp.app).get('/v1/models').set('authorization', `Bearer ${testApp.key}`)).status).toBe(
      200,
    );
  });
});

describe.skipIf(!redisServerInstalled)('when the counters cannot be reached', () => {
  it('allows calls unlimited with an error log (allow), or refuses them with 503 (deny)', async () => {
    const redis = await startOwnRedis();
    cleanups.push(() => redis.stop());
    const make = async (rule: 'allow' | 'deny') => {
      const app = await createTestApp({ limits: settings(redis.url, rule), limitsSource: everyKey({ rpm: 1 }) });
      cleanups.push(() => app.services.close());
      return app;
    };
    const allow = await make('allow');
    const deny = await make('deny');
    expect((await listModels(allow.app, allow.key)).status).toBe(200);
    expect((await listModels(allow.app, allow.key)).status).toBe(429); // limited while Redis is up
    expect((await listModels(deny.app, deny.key)).status).toBe(200);
    await redis.stop();
    const allowed = await listModels(allow.app, allow.key);
    expect(allowed.status).toBe(200);
    expect(allow.logs.some((line) => /limit counters unreachable/.test(String(line.msg)))).toBe(true);
    const denied = await listModels(deny.app, deny.key);
    expect(denied.status).toBe(503);
    expect(denied.body.error.code).toBe('limits_unavailable');
  });
});
