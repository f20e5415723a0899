/**
 * Tavily as a `SearchModel`: `POST <base>/search` with a bearer key
 * (https://docs.tavily.com/documentation/api-reference/endpoint/search). Tavily takes everything natively:
 * `max_results` (at most 20), `include_domains`, `exclude_domains` and `time_range` (day, week, month, year).
 * The model name is its `search_depth` (`basic`, `advanced`); any other name means `basic`. `published_date`
 * comes only for the news topic. Tavily searches its own index, so `source` is the provider id.
 */
import { UpstreamError } from '../../core/api-error.js';
import type { CallContext } from '../../core/call-context.js';
import type { SearchCallOptions, SearchModel, SearchResult } from '../../core/models.js';
import type { UpstreamHttpClient } from '../upstream/http-client.js';
import { filterResults, isoDate, plainText, recencyWindow } from './result-filters.js';

interface TavilyResult {
  url?: unknown;
  title?: unknown;
  content?: unknown;
  score?: unknown;
  published_date?: unknown;
}

const MAX_RESULTS = 20;
const WINDOWS = [
  [1, 'day'],
  [7, 'week'],
  [31, 'month'],
  [366, 'year'],
] as const;
const DEPTHS = new Set(['basic', 'advanced']);

export function tavilyBody(options: SearchCallOptions, modelId: string): Record<string, unknown> {
  const body: Record<string, unknown> = {
    query: options.query,
    max_results: Math.min(MAX_RESULTS, options.maxResults),
    search_depth: DEPTHS.has(modelId) ? modelId : 'basic',
  };
  if (options.includeDomains?.length) {
    body.include_domains = options.includeDomains;
  }
  if (options.excludeDomains?.length) {
    body.exclude_domains = options.excludeDomains;
  }
  const window = recencyWindow(options.recencyDays, WINDOWS);
  if (window) {
    body.time_range = window;
  }
  return body;
}

export function tavilyResults(body: unknown, source: string): SearchResult[] {
  const results = (body as { results?: unknown })?.results;
  if (!Array.isArray(results)) {
    return [];
  }
  return (results as TavilyResult[]).flatMap((result) =>
    typeof result?.url === 'string'
      ? [
          {
            title: typeof result.title === 'string' ? plainText(result.title) : result.url,
            url: result.url,
            snippet: typeof result.content === 'string' ? plainText(result.content) : '',
            publishedAt: isoDate(result.published_date),
            source,
            score: typeof result.score === 'number' && Number.isFinite(result.score) ? result.score : undefined,
          },
        ]
      : [],
  );
}

export function createTavilySearchModel(input: {
  providerId: string;
  client: UpstreamHttpClient;
  modelId: string;
  now?: () => number;
}): SearchModel {
  const now = input.now ?? Date.now;
  return {
    provider: input.providerId,
    modelId: input.modelId,
    async search(options: SearchCallOptions, context: CallContext) {
      const body = await input.client.postJson({
        path: '/search',
        body: tavilyBody(options, input.modelId),
        signal: context.signal,
      });
      if (!body || typeof body !== 'object' || !Array.isArray((body as { results?: unknown }).results)) {
        throw new UpstreamError(
          input.providerId,
          502,
          200,
          `Upstream ${input.providerId} answered without a results list`,
        );
      }
      return { results: filterResults(tavilyResults(body, input.providerId), options, now()) };
    },
  };
}
