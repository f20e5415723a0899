/**
 * What a call costs. A price per model comes from the YAML config (`prices:` or a model's own `price:`), else
 * from the shipped table of well-known upstream models (default-prices.ts, read from `@pydantic/genai-prices`
 * offline), and is 0 for the built-in `local` models. A model with no price anywhere costs 0, with one
 * warning per model, so an unpriced model is visible in the log without failing any call.
 */
import type { Usage } from '../core/chat.js';
import type { MediaUsage } from '../core/models.js';

/** USD per unit; every field optional (absent = 0). */
export interface ModelPrice {
  /** Per 1M input tokens (cached ones excluded when `cachedInputPerMTok` is set). */
  inputPerMTok?: number;
  outputPerMTok?: number;
  /** Per 1M input tokens read from a prompt cache; absent means they cost as input. */
  cachedInputPerMTok?: number;
  /** Per 1M reasoning tokens; absent means they are priced as output (where upstreams count them). */
  reasoningPerMTok?: number;
  perImage?: number;
  perMegapixel?: number;
  /** Per 1,000 characters of speech input. */
  per1kCharacters?: number;
  /** Per second of music or video. */
  perSecond?: number;
}

/** The facts a cost is computed from: a call record's. */
export interface CostFacts {
  model: string | null;
  provider: string | null;
  usage: Usage | null;
  media: MediaUsage | null;
}

export interface PriceTable {
  /** The price of a model by its public id (or a configured alias), or undefined when none is known. */
  priceOf(model: string, provider: string | null): ModelPrice | undefined;
  /** The cost of a finished call in USD; 0 (with one warning per model) when its model has no price. */
  costOf(facts: CostFacts): number;
}

export interface PriceTableOptions {
  /** From the config, by model id or alias. */
  configured: Record<string, ModelPrice>;
  /** The upstream's own name of a model id and its provider's base URL (for the shipped table). */
  describe?(model: string, provider: string | null): { upstreamModel: string; baseUrl?: string } | undefined;
  /** The shipped table's lookup (default-prices.ts); absent in tests that price only from config. */
  defaults?(upstreamModel: string, baseUrl: string | undefined): ModelPrice | undefined;
  warn(model: string): void;
}

const FREE: ModelPrice = {};
const MILLION = 1_000_000;

/** Usage tokens at a price. Input excludes the cached part only when the cached part has a price of its own. */
export function tokenCost(price: ModelPrice, usage: Usage): number {
  const cached = usage.cacheReadTokens ?? 0;
  const cachedPriced = price.cachedInputPerMTok !== undefined;
  const input = cachedPriced ? Math.max(0, usage.inputTokens - cached) : usage.inputTokens;
  const reasoning = usage.reasoningTokens ?? 0;
  // Upstreams count reasoning tokens inside output tokens; a separate reasoning price replaces that part.
  const reasoningPriced = price.reasoningPerMTok !== undefined;
  const output = reasoningPriced ? Math.max(0, usage.outputTokens - reasoning) : usage.outputTokens;
  return (
    (input * (price.inputPerMTok ?? 0) +
      (cachedPriced ? cached * (price.cachedInputPerMTok ?? 0) : 0) +
      output * (price.outputPerMTok ?? 0) +
      (reasoningPriced ? reasoning * (price.reasoningPerMTok ?? 0) : 0)) /
    MILLION
  );
}

/** Media at a price: images (or megapixels), speech characters, seconds of music or video. */
export function mediaCost(price: ModelPrice, media: MediaUsage): number {
  return (
    (media.images ?? 0) * (price.perImage ?? 0) +
    ((media.pixels ?? 0) / MILLION) * (price.perMegapixel ?? 0) +
    ((media.characters ?? 0) / 1000) * (price.per1kCharacters ?? 0) +
    (media.seconds ?? 0) * (price.perSecond ?? 0)
  );
}

export function createPriceTable(options: PriceTableOptions): PriceTable {
  const cache = new Map<string, ModelPrice | null>();
  const warned = new Set<string>();

  function lookUp(model: string, provider: string | null): ModelPrice | null {
    const configured = options.configured[model];
    if (configured) {
      return configured;
    }
    if (provider === 'local' || model.startsWith('local:')) {
      return FREE; // the built-in models run here and cost nothing
    }
    const described = options.describe?.(model, provider);
    const upstreamModel =
      described?.upstreamModel ??
      (provider && model.startsWith(`${provider}:`) ? model.slice(provider.length + 1) : model);
    return options.defaults?.(upstreamModel, described?.baseUrl) ?? null;
  }

  const table: PriceTable = {
    priceOf(model, provider) {
      const cacheKey = `${provider ?? ''}\u0000${model}`;
      let price = cache.get(cacheKey);
      if (price === undefined) {
        price = lookUp(model, provider);
        cache.set(cacheKey, price);
      }
      return price ?? undefined;
    },
    costOf(facts) {
      if (!facts.model || (!facts.usage && !facts.media)) {
        return 0;
      }
      const price = table.priceOf(facts.model, facts.provider);
      if (!price) {
        if (!warned.has(facts.model)) {
          warned.add(facts.model);
          options.warn(facts.model);
        }
        return 0;
      }
      return (facts.usage ? tokenCost(price, facts.usage) : 0) + (facts.media ? mediaCost(price, facts.media) : 0);
    },
  };
  return table;
}

/** A price as the YAML config writes it (`input`, `output`, … in USD per unit). */
export interface ConfiguredPrice {
  input?: number;
  output?: number;
  cached_input?: number;
  reasoning?: number;
  image?: number;
  megapixel?: number;
  speech_1k_characters?: number;
  second?: number;
}

export function fromConfiguredPrice(price: ConfiguredPrice): ModelPrice {
  return {
    inputPerMTok: price.input,
    outputPerMTok: price.output,
    cachedInputPerMTok: price.cached_input,
    reasoningPerMTok: price.reasoning,
    perImage: price.image,
    perMegapixel: price.megapixel,
    per1kCharacters: price.speech_1k_characters,
    perSecond: price.second,
  };
}
