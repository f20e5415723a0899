/**
 * `local:search`: the built-in search model, over the caller's own stored files (see search-index.ts). It runs
 * offline and answers in well under a millisecond per query on thousands of passages. Results link to the
 * file's content as a path of this server; the route makes it absolute. Domains mean nothing here, so domain
 * filters are reported as unhonoured; recency keeps files indexed within the window.
 */
import type { CallContext } from '../../core/call-context.js';
import type { SearchCallOptions, SearchModel, SearchResult } from '../../core/models.js';
import type { LocalSearchIndex } from './search-index.js';

const DAY_MS = 86_400_000;
const SCORE_DIGITS = 4;

export function localFileUrl(fileId: string): string {
  return `/v1/files/${encodeURIComponent(fileId)}/content`;
}

export function createLocalSearchModel(index: LocalSearchIndex, now: () => number = Date.now): SearchModel {
  return {
    provider: 'local',
    modelId: 'search',
    async search(options: SearchCallOptions, context: CallContext) {
      if (options.includeDomains?.length) {
        context.warn({ field: 'include_domains', reason: 'local:search searches stored files, which have no domain' });
      }
      if (options.excludeDomains?.length) {
        context.warn({ field: 'exclude_domains', reason: 'local:search searches stored files, which have no domain' });
      }
      const hits = await index.search({
        keyId: options.keyId,
        query: options.query,
        maxResults: options.maxResults,
        indexedAfter: options.recencyDays === undefined ? undefined : now() - options.recencyDays * DAY_MS,
      });
      const results: SearchResult[] = hits.map((hit) => ({
        title: hit.title,
        url: localFileUrl(hit.fileId),
        snippet: hit.snippet,
        publishedAt: new Date(hit.indexedAt).toISOString(),
        source: 'local',
        // Significant digits, not decimals: FTS5 floors the idf of a word found in half the passages or more at
        // 1e-6, so in a small index every score is of that order, and rounding to 3 decimals made them all 0.
        score: Number(hit.score.toPrecision(SCORE_DIGITS)),
        passage: hit.passage,
      }));
      const filesIndexing = index.pending(options.keyId);
      return filesIndexing > 0 ? { results, filesIndexing } : { results };
    },
  };
}
