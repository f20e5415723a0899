import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfigFile } from '../config.js';
import { buildRegistry } from '../providers/build-registry.js';
import type { ModelRegistry } from '../providers/registry.js';
import { defaultPrice } from './default-prices.js';
import { openLimits } from './open-limits.js';

const YAML = `
providers:
  east:
    type: openai-compatible
    base_url: http://127.0.0.1:9/v1
  west:
    type: openai-compatible
    base_url: http://127.0.0.1:10/v1
models:
  - { provider: east, model: gpt-4o-mini, id: mini }
  - id: spread
    type: chat
    deployments:
      - { provider: east, model: gpt-4o, id: e }
      - { provider: west, model: gpt-4o, id: w }
`;

const registries: ModelRegistry[] = [];
afterEach(async () => {
  await Promise.all(registries.splice(0).map((registry) => registry.close()));
});

function registryOf(yaml: string): ModelRegistry {
  const file = parseConfigFile(yaml, {});
  const registry = buildRegistry({
    providers: Object.entries(file.providers).map(([id, provider]) => ({ ...provider, id })),
    models: file.models,
    aliases: file.aliases,
    routes: file.routes,
  });
  registries.push(registry);
  return registry;
}

function openWith(registry: ModelRegistry, providerUrls: Record<string, string>) {
  const asked: Array<[string, string | undefined]> = [];
  const limits = openLimits({
    settings: { defaults: {}, onStoreDown: 'allow', leaseMs: 60_000 },
    prices: {},
    registry,
    providerUrls,
    logger: pino({ level: 'silent' }),
    defaults: (model, baseUrl) => {
      asked.push([model, baseUrl]);
      return defaultPrice(model, baseUrl);
    },
  });
  return { limits, asked };
}

describe('openLimits', () => {
  it("looks up every upstream model's shipped price at open, so the first call does not load the table", async () => {
    const registry = registryOf(YAML);
    const { limits, asked } = openWith(registry, {
      east: 'http://127.0.0.1:9/v1',
      west: 'http://127.0.0.1:10/v1',
    });
    // Asked before any call was priced: once per model and provider (the deployments' own providers too).
    expect(asked).toEqual(
      expect.arrayContaining([
        ['gpt-4o-mini', 'http://127.0.0.1:9/v1'],
        ['gpt-4o', 'http://127.0.0.1:9/v1'],
      ]),
    );
    const before = asked.length;
    const cost = limits.costOf({
      operation: 'createChatCompletion',
      modelRequested: 'mini',
      model: 'mini',
      provider: 'east',
      usage: { inputTokens: 1_000_000, outputTokens: 0 },
      units: null,
      media: null,
    });
    expect(cost).toBeGreaterThan(0);
    expect(asked.length).toBe(before); // the call found its price in the table built at open
    await limits.close();
  });

  it('asks nothing for the built-in models, which cost nothing', async () => {
    const { limits, asked } = openWith(registryOf('models: []\n'), {});
    expect(asked).toEqual([]);
    await limits.close();
  });
});
