/**
 * The web search providers (`type: searxng | brave | tavily` in the configuration): one undici pool per
 * provider through the shared upstream client, and `search` models only. The model name is passed through
 * (SearXNG categories, Tavily search depth); see each model's module.
 */
import type { ProviderConfig } from '../../config.js';
import type { Provider, SearchModel } from '../../core/models.js';
import { createUpstreamHttpClient } from '../upstream/http-client.js';
import { createBraveSearchModel } from './brave.js';
import { BRAVE_PROTOCOL, SEARXNG_PROTOCOL, TAVILY_PROTOCOL } from './http-protocols.js';
import { createSearxngSearchModel } from './searxng.js';
import { createTavilySearchModel } from './tavily.js';

export type WebSearchProviderConfig = Extract<ProviderConfig, { type: 'searxng' | 'brave' | 'tavily' }>;

export function createWebSearchProvider(config: WebSearchProviderConfig, deps: { now?: () => number } = {}): Provider {
  const protocol =
    config.type === 'searxng' ? SEARXNG_PROTOCOL : config.type === 'brave' ? BRAVE_PROTOCOL : TAVILY_PROTOCOL;
  const client = createUpstreamHttpClient(config, protocol);
  const create =
    config.type === 'searxng'
      ? createSearxngSearchModel
      : config.type === 'brave'
        ? createBraveSearchModel
        : createTavilySearchModel;
  return {
    id: config.id,
    models: {
      search: (modelId: string): SearchModel => create({ providerId: config.id, client, modelId, now: deps.now }),
    },
    close: () => client.close(),
  };
}
