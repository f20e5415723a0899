/**
 * A search result on the wire: `POST /v1/web/search`'s `results[]` and the `web_search` tool's (MCP and
 * `POST /v1/tools/web_search`) are the same object, made here, with the text a language model reads.
 */
import type { SearchResult } from '../../core/models.js';
import type { components } from '../../../generated/api.js';

export type WireSearchResult = components['schemas']['WebSearchResult'];

export function encodeSearchResult(found: SearchResult): WireSearchResult {
  return {
    title: found.title,
    url: found.url,
    snippet: found.snippet,
    published_at: found.publishedAt ?? null,
    source: found.source,
    score: found.score ?? null,
  };
}

/** Numbered results, the date beside the title when known: `1. Title (2025-09-30)\n   url\n   snippet`. */
export function resultsAsText(results: readonly WireSearchResult[]): string {
  if (results.length === 0) {
    return 'No results.';
  }
  return results
    .map((item, index) => {
      const date = item.published_at ? ` (${item.published_at.slice(0, 10)})` : '';
      const lines = [`${index + 1}. ${item.title}${date}`, `   ${item.url}`];
      if (item.snippet) {
        lines.push(`   ${item.snippet.replace(/\s+/g, ' ').trim()}`);
      }
      return lines.join('\n');
    })
    .join('\n\n');
}
