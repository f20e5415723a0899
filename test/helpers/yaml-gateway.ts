/**
 * A test app built from configuration YAML, as `OMNIGATE_CONFIG` would give it (providers, models with their
 * deployments, the circuit breaker), and the fake-upstream answers the retry layer's tests script.
 */
import { parseConfigFile } from '../../server/config.js';
import type { FakeHandler } from '../fakes/fake-upstream.js';
import { createTestApp, type TestApp } from './create-test-app.js';

export async function gatewayFromYaml(
  text: string,
  extra: Omit<NonNullable<Parameters<typeof createTestApp>[0]>, 'providers' | 'models' | 'circuitBreaker'> = {},
): Promise<TestApp> {
  const file = parseConfigFile(text, {});
  return createTestApp({
    ...extra,
    providers: Object.entries(file.providers).map(([id, provider]) => ({ ...provider, id })),
    models: file.models,
    circuitBreaker: file.circuit_breaker,
  });
}

/** A JSON answer with `status` (an upstream error, or a healthy body). */
export const jsonAnswer =
  (status: number, body: string, headers: Record<string, string> = {}): FakeHandler =>
  (_request, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(body);
  };

/** The connection reset before any answer. */
export const resetConnection: FakeHandler = (_request, _res, req) => void req.socket.destroy();
