import { describe, expect, it } from 'vitest';
import { defaultPrice } from './default-prices.js';
import { createPriceTable, fromConfiguredPrice, mediaCost, tokenCost } from './prices.js';

describe('prices', () => {
  it('reads well-known upstream models from the bundled table, without the network', () => {
    // No fetch happens: the package's data ships inside it (updatePrices is never called).
    const original = globalThis.fetch;
    globalThis.fetch = () => Promise.reject(new Error('no network in this test'));
    try {
      const price = defaultPrice('gpt-4o-mini', 'https://api.openai.com/v1');
      expect(price?.inputPerMTok).toBeGreaterThan(0);
      expect(price?.outputPerMTok).toBeGreaterThan(price?.inputPerMTok ?? 0);
      expect(defaultPrice('claude-3-5-haiku-latest', undefined)?.outputPerMTok).toBeGreaterThan(0);
      expect(defaultPrice('no-such-model-anywhere', undefined)).toBeUndefined();
    } finally {
      globalThis.fetch = original;
    }
  });

  it.each([
    ['input and output', { inputPerMTok: 1, outputPerMTok: 4 }, { inputTokens: 10, outputTokens: 1000 }, 0.00401],
    [
      'cached input at its own price',
      { inputPerMTok: 2, cachedInputPerMTok: 1, outputPerMTok: 0 },
      { inputTokens: 1_000_000, outputTokens: 0, cacheReadTokens: 500_000 },
      1.5,
    ],
    [
      'reasoning at its own price',
      { outputPerMTok: 1, reasoningPerMTok: 3 },
      { inputTokens: 0, outputTokens: 1_000_000, reasoningTokens: 250_000 },
      1.5,
    ],
  ])('prices tokens: %s', (_name, price, usage, want) => {
    expect(tokenCost(price, usage)).toBeCloseTo(want, 12);
  });

  it('prices media per image, megapixel, 1,000 characters and second', () => {
    expect(mediaCost({ perImage: 0.04 }, { images: 3 })).toBeCloseTo(0.12, 12);
    expect(mediaCost({ perMegapixel: 0.01 }, { pixels: 2_000_000 })).toBeCloseTo(0.02, 12);
    expect(mediaCost({ per1kCharacters: 15 }, { characters: 500 })).toBeCloseTo(7.5, 12);
    expect(mediaCost({ perSecond: 0.1 }, { seconds: 8 })).toBeCloseTo(0.8, 12);
  });

  it('prefers the config, charges nothing for local models, and warns once per unpriced model', () => {
    const warned: string[] = [];
    const table = createPriceTable({
      configured: { 'up:m': fromConfiguredPrice({ input: 1, output: 2 }) },
      defaults: (name) => (name === 'gpt-4o' ? { inputPerMTok: 100 } : undefined),
      warn: (model) => warned.push(model),
    });
    const usage = { inputTokens: 1_000_000, outputTokens: 1_000_000 };
    expect(table.costOf({ model: 'up:m', provider: 'up', usage, media: null })).toBeCloseTo(3, 12);
    expect(table.costOf({ model: 'openai:gpt-4o', provider: 'openai', usage, media: null })).toBeCloseTo(100, 12);
    expect(table.costOf({ model: 'local:chat', provider: 'local', usage, media: null })).toBe(0);
    expect(table.costOf({ model: 'up:unknown', provider: 'up', usage, media: null })).toBe(0);
    expect(table.costOf({ model: 'up:unknown', provider: 'up', usage, media: null })).toBe(0);
    expect(warned).toEqual(['up:unknown']);
  });
});
