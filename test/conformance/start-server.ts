/**
 * Starts a real Omnigate app (createTestApp: real contract, in-memory SQLite, the built-in `local:*` models)
 * on 127.0.0.1 with an ephemeral port, for conformance tests that drive it with real clients over HTTP.
 */
import type { Server } from 'node:http';
import OpenAI from 'openai';
import { afterAll, beforeAll } from 'vitest';
import type { AddressInfo } from 'node:net';
import { createTestApp, type TestApp } from '../helpers/create-test-app.js';

export interface StartedServer {
  /** `http://127.0.0.1:PORT` (no trailing slash, no `/v1`). */
  baseURL: string;
  /** A valid API key for this app. */
  key: string;
  testApp: TestApp;
  server: Server;
  close(): Promise<void>;
}

export async function startServer(config: Parameters<typeof createTestApp>[0] = {}): Promise<StartedServer> {
  const testApp = await createTestApp(config);
  const server = testApp.app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}`,
    key: testApp.key,
    testApp,
    server,
    async close() {
      testApp.shutdown.abort();
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
      await testApp.videoRunner.stop(0);
      await testApp.usage.close();
      await testApp.registry.close();
      testApp.db.close();
    },
  };
}

/**
 * A server for the whole file and the official OpenAI SDK pointed at it (no retries, so a wrong status shows
 * at once): `const ctx = openAIServer();` then `ctx.client` and `ctx.started` inside the tests.
 */
export function openAIServer(config: Parameters<typeof createTestApp>[0] = {}): {
  started: StartedServer;
  client: OpenAI;
} {
  const context = {} as { started: StartedServer; client: OpenAI };
  beforeAll(async () => {
    context.started = await startServer(config);
    context.client = new OpenAI({
      apiKey: context.started.key,
      baseURL: `${context.started.baseURL}/v1`,
      maxRetries: 0,
    });
  });
  afterAll(async () => {
    await context.started?.close();
  });
  return context;
}
