/**
 * Brave Search as a `SearchModel`: `GET <base>/web/search?q=…&count=…` with `X-Subscription-Token`
 * (https://api-dashboard.search.brave.com/app/documentation/web-search/query). `count` is at most 20,
 * `freshness` is `pd`/`pw`/`pm`/`py`, and domains go into the query as `site:` (one include domain; the rest is
 * filtered here). Descriptions carry `<strong>` highlights, removed; `page_age` is the page's date. Brave
 * searches its own index, so `source` is the provider id.
 */
import { UpstreamError } from '../../core/api-error.js';
import type { CallContext } from '../../core/call-context.js';
import type { SearchCallOptions, SearchModel, SearchResult } from '../../core/models.js';
import type { UpstreamHttpClient } from '../upstream/http-client.js';
import { readJsonBody } from '../upstream/read-body.js';
import { filterResults, isoDate, plainText, recencyWindow, withSiteOperator } from './result-filters.js';

interface BraveResult {
  url?: unknown;
  title?: unknown;
  description?: unknown;
  page_age?: unknown;
}

const MAX_COUNT = 20;
const WINDOWS = [
  [1, 'pd'],
  [7, 'pw'],
  [31, 'pm'],
  [366, 'py'],
] as const;

export function braveQuery(options: SearchCallOptions): string {
  // Asking for a few more than wanted leaves room for the results the domain filter drops.
  const wanted =
    options.excludeDomains?.length || (options.includeDomains?.length ?? 0) > 1
      ? options.maxResults * 2
      : options.maxResults;
  const query = new URLSearchParams({
    q: withSiteOperator(options.query, options.includeDomains),
    count: String(Math.min(MAX_COUNT, wanted)),
  });
  const window = recencyWindow(options.recencyDays, WINDOWS);
  if (window) {
    query.set('freshness', window);
  }
  return query.toString();
}

export function braveResults(body: unknown, source: string): SearchResult[] {
  const results = (body as { web?: { results?: unknown } })?.web?.results;
  if (!Array.isArray(results)) {
    return [];
  }
  return (results as BraveResult[]).flatMap((result) =>
    typeof result?.url === 'string'
      ? [
          {
            title: typeof result.title === 'string' ? plainText(result.title) : result.url,
            url: result.url,
            snippet: typeof result.description === 'string' ? plainText(result.description) : '',
            publishedAt: isoDate(result.page_age),
            source,
          },
        ]
      : [],
  );
}

export function createBraveSearchModel(input: {
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
      const response = await input.client.send({
        method: 'GET',
        path: '/web/search',
        query: braveQuery(options),
        accept: 'application/json',
        signal: context.signal,
      });
      const body = await readJsonBody(input.providerId, response);
      if (!body || typeof body !== 'object') {
        throw new UpstreamError(
          input.providerId,
          502,
          response.status,
          `Upstream ${input.providerId} answered without a JSON object`,
        );
      }
      // A query Brave finds nothing for has no `web` section at all.
      return { results: filterResults(braveResults(body, input.providerId), options, now()) };
    },
  };
}
