/**
 * The gateway under test, in-process: the real app (real contract, in-memory SQLite) listening on a random
 * loopback port, plus a look-up of the usage record a call wrote.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '../../../server/config.js';
import { createTestApp, type TestApp } from '../../helpers/create-test-app.js';

export interface Gateway {
  /** `http://127.0.0.1:<port>`: OpenAI clients use `${origin}/v1`, Anthropic clients `${origin}/anthropic`. */
  origin: string;
  key: string;
  test: TestApp;
  /** The usage record of one call, by its `x-svc-request-id`; waits for the recorder's flush. */
  usage(requestId: string): Promise<UsageRecord>;
  /** Usage records of this key, newest first. */
  usageRecords(): Promise<UsageRecord[]>;
  close(): Promise<void>;
}

export interface UsageRecord {
  request_id: string;
  operation: string;
  model_requested: string | null;
  model: string | null;
  provider: string | null;
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
  cache_write_tokens: number;
  reasoning_tokens: number;
  status: number;
}

export type GatewayConfig = Parameters<typeof createTestApp>[0];

export async function startGateway(config: GatewayConfig = {}): Promise<Gateway> {
  const test = await createTestApp(config);
  const server: Server = await new Promise((resolve) => {
    const listening = test.app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const headers = { authorization: `Bearer ${test.key}` };

  async function list(query: string): Promise<UsageRecord[]> {
    const response = await fetch(`${origin}/v1/usage?${query}`, { headers });
    if (!response.ok) {
      throw new Error(`GET /v1/usage?${query}: ${response.status} ${await response.text()}`);
    }
    return ((await response.json()) as { data: UsageRecord[] }).data;
  }

  return {
    origin,
    key: test.key,
    test,
    async usage(requestId) {
      for (let attempt = 0; attempt < 100; attempt += 1) {
        const [record] = await list(`request_id=${encodeURIComponent(requestId)}`);
        if (record) {
          return record;
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error(`no usage record for ${requestId}`);
    },
    usageRecords: () => list('limit=100'),
    async close() {
      test.shutdown.abort();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await test.registry.close();
      await test.usage.close();
      test.db.close();
    },
  };
}

/** Provider entries for the scripted fakes (see fakes.ts), for `startGateway({ providers })`. */
export function fakeProviders(fakes: { anthropic?: string; openai?: string }): Config['providers'] {
  const providers: Config['providers'] = [];
  if (fakes.anthropic) {
    providers.push({
      id: 'anth',
      type: 'anthropic',
      base_url: fakes.anthropic,
      api_key: 'fake-anthropic-key',
      anthropic_version: '2023-06-01',
      timeout_ms: 30_000,
      max_connections: 8,
      headers: {},
    });
  }
  if (fakes.openai) {
    providers.push({
      id: 'oai',
      type: 'openai-compatible',
      base_url: `${fakes.openai}/v1`,
      api_key: 'fake-openai-key',
      responses: 'translate',
      timeout_ms: 30_000,
      max_connections: 8,
      headers: {},
    });
  }
  return providers;
}
