/**
 * The shipped price table: token prices of well-known upstream models from `@pydantic/genai-prices` (a
 * maintained table, not one typed in by hand). Only its bundled data is read — `updatePrices` (the package's
 * one way to fetch newer data) is never called, so pricing works offline. The package (~0.5 MB of JS) is
 * loaded on the first lookup (open-limits.ts looks every configured model up at start), so a gateway with only the
 * built-in models never loads it.
 */
import { createRequire } from 'node:module';
import type { ModelPrice } from './prices.js';

type GenaiPrices = typeof import('@pydantic/genai-prices');
type PackagePrice = Record<string, number | { base: number } | undefined>;

let loaded: GenaiPrices | undefined;

function genaiPrices(): GenaiPrices {
  loaded ??= createRequire(import.meta.url)('@pydantic/genai-prices') as GenaiPrices;
  return loaded;
}

/** A flat price, or the base of a tiered one (the tiers start past 200k-token prompts: a reservation's upper bound is not needed here). */
function flat(value: PackagePrice[string]): number | undefined {
  return typeof value === 'number' ? value : value?.base;
}

/** The package's price of `upstreamModel` (matched by its provider's API URL when given), per our units. */
export function defaultPrice(upstreamModel: string, baseUrl: string | undefined): ModelPrice | undefined {
  const { calcPrice } = genaiPrices();
  const usage = { input_tokens: 0, output_tokens: 0 };
  let found: ReturnType<GenaiPrices['calcPrice']> = null;
  try {
    found =
      (baseUrl ? calcPrice(usage, upstreamModel, { providerApiUrl: baseUrl }) : null) ??
      calcPrice(usage, upstreamModel);
  } catch {
    found = null; // an unmatched provider URL throws in some versions: no price, as for an unknown model
  }
  if (!found) {
    return undefined;
  }
  const price = found.model_price as PackagePrice;
  return {
    inputPerMTok: flat(price.input_mtok),
    outputPerMTok: flat(price.output_mtok),
    cachedInputPerMTok: flat(price.cache_read_mtok),
  };
}
