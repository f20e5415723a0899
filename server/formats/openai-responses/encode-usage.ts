/**
 * Canonical usage → Responses `usage`.
 *
 * Assumes canonical counts follow OpenAI's convention (`inputTokens` includes cache reads, `outputTokens` includes
 * reasoning tokens), so they map one to one; absent detail counters are reported as 0, as OpenAI does.
 */
import type { Usage } from '../../core/chat.js';
import type { ResponseUsage } from './wire-types.js';

export function encodeUsage(usage: Usage): ResponseUsage {
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: { cached_tokens: usage.cacheReadTokens ?? 0 },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
}
