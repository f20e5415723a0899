/**
 * A usage estimate for upstreams that report none (older llama.cpp and LM Studio builds ignore
 * `stream_options.include_usage`): input from the call's own token count, output by tokenizing what the
 * upstream produced with o200k_base. It is an estimate; a billing record from it is only approximately right.
 */
import type { Usage } from '../../core/chat.js';
import type { BoundedText } from '../../tokens/bounded-text.js';
import { estimatedUsage } from '../../tokens/estimated-usage.js';
import type { UpstreamDecodeContext } from './upstream-decode-context.js';

export async function estimateUsage(context: UpstreamDecodeContext, produced: BoundedText): Promise<Usage> {
  return estimatedUsage(context.estimateInputTokens?.() ?? 0, produced);
}
