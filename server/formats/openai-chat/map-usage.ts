/**
 * Token usage between the canonical core and the chat-completions wire, both directions.
 *
 * Canonical `inputTokens` is the whole prompt, cached tokens included (OpenAI's `prompt_tokens`
 * semantics); `cacheReadTokens` says how much of it came from the cache.
 */
import type { Usage } from '../../core/chat.js';
import type { ChatCompletionUsage, UpstreamUsage } from './wire-types.js';

export function encodeUsage(usage: Usage): ChatCompletionUsage {
  const wire: ChatCompletionUsage = {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
  if (usage.cacheReadTokens !== undefined) {
    wire.prompt_tokens_details = { cached_tokens: usage.cacheReadTokens };
  }
  if (usage.reasoningTokens !== undefined) {
    wire.completion_tokens_details = { reasoning_tokens: usage.reasoningTokens };
  }
  return wire;
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** Returns undefined when the object carries no token counts at all (some servers send `usage: {}`). */
export function decodeUsage(wire: UpstreamUsage | null | undefined): Usage | undefined {
  if (!wire || typeof wire !== 'object') {
    return undefined;
  }
  const inputTokens = count(wire.prompt_tokens);
  const outputTokens = count(wire.completion_tokens);
  if (inputTokens === undefined && outputTokens === undefined) {
    return undefined;
  }
  const usage: Usage = { inputTokens: inputTokens ?? 0, outputTokens: outputTokens ?? 0 };
  const cached = count(wire.prompt_tokens_details?.cached_tokens) ?? count(wire.prompt_cache_hit_tokens);
  if (cached !== undefined) {
    usage.cacheReadTokens = cached;
  }
  const reasoning = count(wire.completion_tokens_details?.reasoning_tokens);
  if (reasoning !== undefined) {
    usage.reasoningTokens = reasoning;
  }
  return usage;
}
