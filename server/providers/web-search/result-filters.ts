/**
 * What every web search provider's results go through, whatever the provider honoured itself: URLs that are
 * not absolute http(s) are dropped (the contract's `url` is a URI), HTML the provider left in titles and
 * snippets (Brave's `<strong>`) is removed, dates become ISO 8601 in UTC, and the domain and recency filters
 * are applied again — a provider that ignored them must not leak what the caller excluded.
 */
import type { SearchCallOptions, SearchResult } from '../../core/models.js';

const DAY_MS = 86_400_000;
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", '#39': "'", nbsp: ' ' };

export function plainText(html: string): string {
  return html
    .replace(/<[^>]*>/g, '')
    .replace(/&(amp|lt|gt|quot|apos|#39|nbsp);/g, (_match, name: string) => ENTITIES[name]!)
    .replace(/\s+/g, ' ')
    .trim();
}

/** A provider's date as ISO 8601; a date-time without a zone is read as UTC. Unreadable dates are dropped. */
export function isoDate(value: unknown): string | undefined {
  if (typeof value !== 'string' || !value.trim()) {
    return undefined;
  }
  const text = /^\d{4}-\d{2}-\d{2}T[\d:.]+$/.test(value.trim()) ? `${value.trim()}Z` : value.trim();
  const time = Date.parse(text);
  return Number.isNaN(time) ? undefined : new Date(time).toISOString();
}

function hostOf(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.hostname.toLowerCase() : undefined;
  } catch {
    return undefined;
  }
}

/** `nodejs.org` covers `nodejs.org` and `docs.nodejs.org`, not `notnodejs.org`. */
export function hostMatches(host: string, domain: string): boolean {
  const bare = domain.toLowerCase().replace(/\.$/, '');
  return host === bare || host.endsWith(`.${bare}`);
}

export function filterResults(results: SearchResult[], options: SearchCallOptions, now: number): SearchResult[] {
  const oldest = options.recencyDays === undefined ? undefined : now - options.recencyDays * DAY_MS;
  return results
    .filter((result) => {
      const host = hostOf(result.url);
      if (!host) {
        return false;
      }
      if (options.includeDomains?.length && !options.includeDomains.some((domain) => hostMatches(host, domain))) {
        return false;
      }
      if (options.excludeDomains?.some((domain) => hostMatches(host, domain))) {
        return false;
      }
      // An undated result is kept: the provider was asked for the window and most omit dates.
      return oldest === undefined || result.publishedAt === undefined || Date.parse(result.publishedAt) >= oldest;
    })
    .slice(0, options.maxResults);
}

/** The one `site:` operator engines understand; several include domains are left to the filter above. */
export function withSiteOperator(query: string, includeDomains: string[] | undefined): string {
  return includeDomains?.length === 1 ? `${query} site:${includeDomains[0]}` : query;
}

/** The provider's coarse window covering `days` (never narrower, so the filter above does the rest). */
export function recencyWindow<T extends string>(
  days: number | undefined,
  windows: ReadonlyArray<readonly [number, T]>,
): T | undefined {
  if (days === undefined) {
    return undefined;
  }
  return (windows.find(([limit]) => days <= limit) ?? windows[windows.length - 1])![1];
}
