/**
 * A caller's query as an FTS5 MATCH expression that cannot be a syntax error: FTS5 reads `"`, `*`, `(`, `-`,
 * `:`, `^`, `NEAR`, `AND`, `OR` and `NOT` as operators and throws on a stray one. Only runs of letters and
 * digits are kept, each quoted as a string (a quote inside is doubled, though none can remain), and joined
 * with OR: FTS5's default AND finds nothing as soon as one word of a question is missing, while OR under bm25
 * still ranks the passages holding more of the words first.
 */

/** More terms than this add noise, not recall, and each one costs a posting-list scan. */
const MAX_TERMS = 32;

export function queryTerms(query: string): string[] {
  const terms = new Set<string>();
  for (const match of query
    .normalize('NFKC')
    .toLowerCase()
    .matchAll(/[\p{L}\p{N}]+/gu)) {
    terms.add(match[0]);
    if (terms.size === MAX_TERMS) {
      break;
    }
  }
  return [...terms];
}

/** `undefined` when the query has no searchable word (only punctuation): nothing can match. */
export function safeMatchExpression(query: string): string | undefined {
  const terms = queryTerms(query);
  return terms.length === 0 ? undefined : terms.map((term) => `"${term.replaceAll('"', '""')}"`).join(' OR ');
}
