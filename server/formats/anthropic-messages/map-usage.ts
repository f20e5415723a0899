/**
 * Canonical `Usage` ↔ Anthropic usage objects.
 *
 * Anthropic's `input_tokens` counts only the input tokens that were neither read from nor written to the prompt
 * cache; `cache_read_input_tokens` and `cache_creation_input_tokens` are reported beside it. The canonical
 * `inputTokens` is the whole input (as OpenAI's `prompt_tokens`, of which `cached_tokens` is a part), with
 * `cacheReadTokens`/`cacheWriteTokens` as parts of it. So decoding adds the cache counters in and encoding takes
 * them out again; an Anthropic → canonical → Anthropic trip gives back the upstream's numbers unchanged.
 */
import type { Usage } from '../../core/chat.js';
import type { AnthropicUpstreamUsage, AnthropicUsage } from './wire-types.js';

/** Cache counters the provider did not report are `null`, not 0: "unknown" is not "no cache hit". */
export function toAnthropicUsage(usage: Usage): AnthropicUsage {
  const cached = (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0);
  return {
    input_tokens: Math.max(0, usage.inputTokens - cached),
    output_tokens: usage.outputTokens,
    cache_creation_input_tokens: usage.cacheWriteTokens ?? null,
    cache_read_input_tokens: usage.cacheReadTokens ?? null,
  };
}

/** Anthropic's counters as last reported; streamed counters are cumulative, so later values replace earlier. */
export interface AnthropicUsageCounters {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
  thinking?: number;
}

function counter(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** Takes every non-null counter of `usage`; null or missing ones leave what was known. */
export function mergeAnthropicUsage(
  into: AnthropicUsageCounters,
  usage: AnthropicUpstreamUsage | null | undefined,
): AnthropicUsageCounters {
  const merged = { ...into };
  if (!usage || typeof usage !== 'object') {
    return merged;
  }
  merged.input = counter(usage.input_tokens) ?? merged.input;
  merged.output = counter(usage.output_tokens) ?? merged.output;
  merged.cacheRead = counter(usage.cache_read_input_tokens) ?? merged.cacheRead;
  merged.cacheWrite = counter(usage.cache_creation_input_tokens) ?? merged.cacheWrite;
  merged.thinking = counter(usage.output_tokens_details?.thinking_tokens) ?? merged.thinking;
  return merged;
}

export function usageFromCounters(counters: AnthropicUsageCounters): Usage {
  const usage: Usage = {
    inputTokens: counters.input + (counters.cacheRead ?? 0) + (counters.cacheWrite ?? 0),
    outputTokens: counters.output,
  };
  if (counters.cacheRead !== undefined) {
    usage.cacheReadTokens = counters.cacheRead;
  }
  if (counters.cacheWrite !== undefined) {
    usage.cacheWriteTokens = counters.cacheWrite;
  }
  if (counters.thinking !== undefined) {
    usage.reasoningTokens = counters.thinking;
  }
  return usage;
}

export function fromAnthropicUsage(usage: AnthropicUpstreamUsage | null | undefined): Usage {
  return usageFromCounters(mergeAnthropicUsage({ input: 0, output: 0 }, usage));
}
