/**
 * A SearXNG instance as a `SearchModel`: `GET <base>/search?q=…&format=json` (https://docs.searxng.org/dev/search_api.html;
 * the instance must have `json` among its `search.formats`, else it answers 403). SearXNG has no result count
 * (a page holds about 20), no domain filter (one include domain becomes a `site:` operator the engines
 * understand) and `time_range` of day, month or year only (a week asks for the month and is filtered by date
 * here). Each result names the engine that found it, which becomes its `source`. The model name picks
 * SearXNG `categories` (`general`, `news`, `it`, …); `web` or `default` leaves the instance's own.
 */
import { UpstreamError } from '../../core/api-error.js';
import type { CallContext } from '../../core/call-context.js';
import type { SearchCallOptions, SearchModel, SearchResult } from '../../core/models.js';
import type { UpstreamHttpClient } from '../upstream/http-client.js';
import { readJsonBody } from '../upstream/read-body.js';
import { filterResults, isoDate, plainText, recencyWindow, withSiteOperator } from './result-filters.js';

interface SearxngResult {
  url?: unknown;
  title?: unknown;
  content?: unknown;
  engine?: unknown;
  score?: unknown;
  publishedDate?: unknown;
}

const WINDOWS = [
  [1, 'day'],
  [31, 'month'],
  [366, 'year'],
] as const;

export function searxngQuery(options: SearchCallOptions, categories: string | undefined): string {
  const query = new URLSearchParams({
    q: withSiteOperator(options.query, options.includeDomains),
    format: 'json',
    pageno: '1',
  });
  const window = recencyWindow(options.recencyDays, WINDOWS);
  if (window) {
    query.set('time_range', window);
  }
  if (categories) {
    query.set('categories', categories);
  }
  return query.toString();
}

export function searxngResults(body: unknown): SearchResult[] {
  const results = (body as { results?: unknown })?.results;
  if (!Array.isArray(results)) {
    return [];
  }
  return (results as SearxngResult[]).flatMap((result) => {
    if (typeof result?.url !== 'string') {
      return [];
    }
    return [
      {
        title: typeof result.title === 'string' ? plainText(result.title) : result.url,
        url: result.url,
        snippet: typeof result.content === 'string' ? plainText(result.content) : '',
        publishedAt: isoDate(result.publishedDate),
        source: typeof result.engine === 'string' && result.engine ? result.engine : 'searxng',
        score: typeof result.score === 'number' && Number.isFinite(result.score) ? result.score : undefined,
      },
    ];
  });
}

export function createSearxngSearchModel(input: {
  providerId: string;
  client: UpstreamHttpClient;
  modelId: string;
  now?: () => number;
}): SearchModel {
  const categories = input.modelId === 'web' || input.modelId === 'default' ? undefined : input.modelId;
  const now = input.now ?? Date.now;
  return {
    provider: input.providerId,
    modelId: input.modelId,
    async search(options: SearchCallOptions, context: CallContext) {
      const response = await input.client.send({
        method: 'GET',
        path: '/search',
        query: searxngQuery(options, categories),
        accept: 'application/json',
        signal: context.signal,
      });
      const body = await readJsonBody(input.providerId, response);
      if (!body || typeof body !== 'object' || !Array.isArray((body as { results?: unknown }).results)) {
        throw new UpstreamError(
          input.providerId,
          502,
          response.status,
          `Upstream ${input.providerId} answered without a results list`,
        );
      }
      return { results: filterResults(searxngResults(body), options, now()) };
    },
  };
}
