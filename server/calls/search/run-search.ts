/**
 * One search, for `POST /v1/web/search` and the search step of `POST /v1/search/answer`: resolve the search
 * model (the request's, else the configured default, else `local:search`) for the caller's key, run it scoped
 * to that key, make this server's own result paths (`/v1/files/{id}/content`) absolute, and count the query and
 * its results on the call's usage record.
 */
import type { CallScope } from '../../http/call-scope.js';
import type { SearchResult } from '../../core/models.js';
import { prepareCall, type CallDeps, type CallRole } from '../prepare-call.js';

export const BUILT_IN_SEARCH_MODEL = 'local:search';
export const DEFAULT_MAX_RESULTS = 10;

const RECENCY_DAYS = { day: 1, week: 7, month: 31, year: 365 } as const;

export interface SearchRequest {
  query: string;
  model?: string;
  max_results?: number;
  recency?: keyof typeof RECENCY_DAYS;
  include_domains?: string[];
  exclude_domains?: string[];
  search_type?: 'web' | 'news';
}

export interface SearchDeps extends CallDeps {
  /** The configured default search model (`default_search_model`). */
  defaultSearchModel?: string;
}

export interface SearchOutcome {
  /** The provider id that ran the search. */
  provider: string;
  results: SearchResult[];
  /** How many of the caller's files were still being indexed (not searched), when the model searched files and some were. */
  filesIndexing?: number;
}

/** `role`: `search-step` when the search feeds a search answer (prepare-call.ts says where its deployment goes). */
export async function runSearch(
  deps: SearchDeps,
  scope: CallScope,
  body: SearchRequest,
  role: CallRole = 'call',
): Promise<SearchOutcome> {
  const call = prepareCall(deps, scope, body.model ?? deps.defaultSearchModel ?? BUILT_IN_SEARCH_MODEL, 'search', role);
  if (body.search_type === 'news') {
    call.context.warn({
      field: 'search_type',
      reason: 'news search is not offered by the search providers yet; a web search was run',
    });
  }
  const { results, filesIndexing } = await call.model.search(
    {
      query: body.query,
      maxResults: body.max_results ?? DEFAULT_MAX_RESULTS,
      keyId: scope.key.id,
      includeDomains: body.include_domains,
      excludeDomains: body.exclude_domains,
      recencyDays: body.recency ? RECENCY_DAYS[body.recency] : undefined,
    },
    call.context,
  );
  const base = scope.baseUrl;
  const absolute = results.map((result) =>
    result.url.startsWith('/') ? { ...result, url: `${base}${result.url}` } : result,
  );
  const record = call.call;
  record.media = { queries: 1, results: absolute.length };
  // The provider that ran it: with deployments, the one that served (recorded by the retry layer), not the first.
  // (A search step leaves the record's provider to the answer's writer; search answers do not name theirs.)
  const provider =
    role === 'search-step' ? call.resolved.entry.provider : (record.provider ?? call.resolved.entry.provider);
  return { provider, results: absolute, ...(filesIndexing && { filesIndexing }) };
}
