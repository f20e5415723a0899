/**
 * A usage estimate for upstreams that report none (older llama.cpp and LM Studio builds ignore
 * `stream_options.include_usage`): input from the call's own token count, output by tokenizing what the
 * upstream produced with o200k_base. It is an estimate; a billing record from it is only approximately right.
 */
import type { Usage } from '../../providers/types.js';
import { countTextTokens } from '../../tokens/tokenizer.js';

export function estimateUsage(inputTokens: number, producedTexts: readonly string[]): Usage {
  return { inputTokens, outputTokens: countTextTokens(producedTexts.join('')) };
}
