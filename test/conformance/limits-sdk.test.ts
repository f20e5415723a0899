/**
 * What the official OpenAI SDK does with our refusals, counted at the server: it waits for `Retry-After` and
 * retries a `rate_limit_exceeded`, and it does not retry `insufficient_quota` (`x-should-retry: false`).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import type { Limits } from '../../server/core/limits.js';
import type { ProviderConfig } from '../../server/config.js';
import { startFakeUpstream } from '../fakes/fake-upstream.js';
import { createTestApp } from '../helpers/create-test-app.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) {
    await close();
  }
});

/** The app behind a server that notes when each request arrived. */
async function serve(limits: Limits, providers: ProviderConfig[] = []): Promise<{ client: OpenAI; hits: number[] }> {
  const testApp = await createTestApp({
    providers,
    limits: { defaults: {}, onStoreDown: 'allow', leaseMs: 60_000 },
    limitsSource: { limitsFor: () => ({ key: limits }) },
  });
  const hits: number[] = [];
  const server: Server = createServer((req, res) => {
    hits.push(performance.now());
    testApp.app(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await testApp.services.close();
  });
  const { port } = server.address() as AddressInfo;
  return { client: new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: testApp.key, maxRetries: 2 }), hits };
}

describe('the OpenAI SDK against limits', () => {
  it('does not retry insufficient_quota', async () => {
    const { client, hits } = await serve({ budgetUsd: 0, budgetPeriod: 'total' });
    const error = await client.chat.completions
      .create({ model: 'local:chat', messages: [{ role: 'user', content: 'Hi' }] })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect((error as InstanceType<typeof OpenAI.RateLimitError>).code).toBe('insufficient_quota');
    expect(hits).toHaveLength(1);
  });

  it('waits for Retry-After before retrying rate_limit_exceeded', async () => {
    // One slot, held by a call whose upstream answers only when the test says so.
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let reached: () => void = () => undefined;
    const upstreamReached = new Promise<void>((resolve) => {
      reached = resolve;
    });
    const upstream = await startFakeUpstream(async (_request, res) => {
      reached();
      await released;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'c1',
          object: 'chat.completion',
          created: 1,
          model: 'm',
          choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
    });
    closers.push(() => upstream.close());
    const provider: ProviderConfig = {
      id: 'fake',
      type: 'openai-compatible',
      base_url: `${upstream.origin}/v1`,
      timeout_ms: 60_000,
      max_connections: 4,
      headers: {},
      responses: 'translate',
    };
    const { client, hits } = await serve({ maxParallel: 1 }, [provider]);
    const holder = client.chat.completions.create({ model: 'fake:m', messages: [{ role: 'user', content: 'Hi' }] });
    await upstreamReached;
    const refused = await client.models.list().catch((caught: unknown) => caught);
    // Still held: the SDK's first try and both retries were refused, each retry at least the second it was told.
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    expect(hits).toHaveLength(4);
    for (let i = 2; i < hits.length; i++) {
      expect(hits[i]! - hits[i - 1]!).toBeGreaterThanOrEqual(900);
    }
    release();
    await holder;
    expect((await client.models.list()).data.length).toBeGreaterThan(0);
  });
});
