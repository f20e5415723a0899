/**
 * Builds the limits of a server from its configuration: the price table (config over the shipped table, 0 for
 * the built-in models), the counters (Redis when `OMNIGATE_REDIS_URL` is set, else in process) and the call
 * limiter over them. services.ts calls it once; `close()` sends held settlements, then disconnects Redis.
 */
import type { Logger } from 'pino';
import type { LimitSettings } from '../config.js';
import type { ModelRegistry } from '../providers/registry.js';
import type { CallFacts } from '../observability/hooks.js';
import { type CallLimiter, createCallLimiter, type LimitsSource, recordLimitsSource } from './call-limiter.js';
import type { CounterStore } from './counter-store.js';
import { defaultPrice } from './default-prices.js';
import { createMemoryCounters } from './memory-counters.js';
import { type ConfiguredPrice, createPriceTable, fromConfiguredPrice, type PriceTable } from './prices.js';
import { createRedisCounters } from './redis-counters.js';

export interface OpenLimitsInput {
  settings: LimitSettings;
  prices: Record<string, ConfiguredPrice>;
  registry: ModelRegistry;
  /** Base URLs of the configured providers, to match them in the shipped table. */
  providerUrls: Record<string, string>;
  logger: Logger;
  /** Where limits come from; the config's defaults over each key's own by default. */
  source?: LimitsSource;
  /** Prefix of the Redis keys (tests give each run its own). */
  redisPrefix?: string;
  now?: () => number;
  /** The shipped table's lookup (default-prices.ts); tests pass their own to see when it is asked. */
  defaults?: typeof defaultPrice;
}

export interface OpenedLimits {
  prices: PriceTable;
  costOf(facts: CallFacts): number;
  counters: CounterStore;
  limiter: CallLimiter;
  close(): Promise<void>;
}

/**
 * Looks up every configured model's price (and each deployment's) once, at start: the first lookup of an upstream
 * model loads the shipped table (~0.5 MB of JS, 100-250 ms of the event loop measured on the perf kit's machine),
 * which would otherwise land on the first call after every start. Built-in models cost nothing and load nothing.
 */
function warmPrices(prices: PriceTable, registry: ModelRegistry): void {
  for (const entry of registry.list()) {
    prices.priceOf(entry.id, entry.provider);
    for (const deployment of entry.resilience?.deployments ?? []) {
      prices.priceOf(entry.id, deployment.provider);
    }
  }
}

export function openLimits(input: OpenLimitsInput): OpenedLimits {
  const { settings, registry, logger } = input;
  const prices = createPriceTable({
    configured: Object.fromEntries(
      Object.entries(input.prices).map(([name, price]) => [name, fromConfiguredPrice(price)]),
    ),
    describe(model, provider) {
      const entry = registry.find(model);
      const providerId = entry?.provider ?? provider;
      return entry
        ? { upstreamModel: entry.upstreamModel, baseUrl: providerId ? input.providerUrls[providerId] : undefined }
        : undefined;
    },
    defaults: input.defaults ?? defaultPrice,
    warn: (model) =>
      logger.warn(
        { model },
        `no price for model '${model}': its calls are counted at $0 (set one under prices: in the config)`,
      ),
  });
  warmPrices(prices, registry);
  const counters = settings.redisUrl
    ? createRedisCounters({
        url: settings.redisUrl,
        prefix: input.redisPrefix,
        onConnectionError: (error) => logger.debug({ err: error }, 'limit counters: Redis connection error'),
        onGiveBackError: (error) =>
          logger.warn({ err: error }, 'limit counters: an unused block could not be given back (it expires instead)'),
      })
    : createMemoryCounters();
  const limiter = createCallLimiter({
    counters,
    source: input.source ?? recordLimitsSource(settings.defaults),
    prices,
    resolveModel(requested, type, key) {
      try {
        const { entry } = registry.resolve(requested ?? '', type, key);
        return { id: entry.id, provider: entry.provider };
      } catch {
        return undefined; // the call itself answers the 404/403; the estimate prices nothing
      }
    },
    logger,
    onStoreDown: settings.onStoreDown,
    leaseMs: settings.leaseMs,
    now: input.now,
  });
  return {
    prices,
    costOf: (facts) => prices.costOf(facts),
    counters,
    limiter,
    close: () => counters.close(),
  };
}
