/**
 * The rerank answer of Cohere and Jina: ours from canonical results, and an upstream's into them (`results` of
 * `index` and `relevance_score`; tokens from Jina's `usage.total_tokens` or Cohere's `meta.billed_units`).
 */
import type { RerankResult } from '../../core/models.js';
import type { components } from '../../../generated/api.js';

export type RerankResponse = components['schemas']['RerankResponse'];

export function encodeRerankResponse(input: {
  id: string;
  model: string;
  result: RerankResult;
  documents: string[];
  returnDocuments: boolean;
}): RerankResponse {
  const tokens = input.result.usage.inputTokens;
  return {
    id: input.id,
    model: input.model,
    results: input.result.results.map(({ index, score }) => ({
      index,
      relevance_score: score,
      ...(input.returnDocuments ? { document: { text: input.documents[index] ?? '' } } : {}),
    })),
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}

/** An upstream's answer, or a message saying what was wrong with it. */
export function decodeUpstreamRerank(
  body: unknown,
  documents: number,
): { results: RerankResult['results']; tokens?: number } | { error: string } {
  const results = (body as { results?: unknown })?.results;
  if (!Array.isArray(results)) {
    return { error: 'the answer has no results array' };
  }
  const decoded: RerankResult['results'] = [];
  const seen = new Set<number>();
  for (const [position, item] of results.entries()) {
    const { index, relevance_score: score } = (item ?? {}) as { index?: unknown; relevance_score?: unknown };
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= documents || seen.has(index)) {
      return { error: `results[${position}].index is not a distinct document position` };
    }
    if (typeof score !== 'number' || !Number.isFinite(score)) {
      return { error: `results[${position}].relevance_score is not a number` };
    }
    seen.add(index);
    decoded.push({ index, score });
  }
  decoded.sort((a, b) => b.score - a.score || a.index - b.index);
  const { usage, meta } = body as {
    usage?: { total_tokens?: unknown; prompt_tokens?: unknown };
    meta?: { billed_units?: { input_tokens?: unknown; total_tokens?: unknown } };
  };
  const tokens = [
    usage?.total_tokens,
    usage?.prompt_tokens,
    meta?.billed_units?.total_tokens,
    meta?.billed_units?.input_tokens,
  ].find((value): value is number => typeof value === 'number' && Number.isFinite(value) && value >= 0);
  return tokens === undefined ? { results: decoded } : { results: decoded, tokens };
}
