/**
 * The usage of a call whose upstream reported none, counted with the tokenizer: the input's count (already
 * asked for by the caller) and the count of what the upstream produced. Both counts are asked for in the same
 * turn, so they go to the tokenizer thread in one job (encoder-client.ts).
 */
import type { Usage } from '../core/chat.js';
import type { BoundedText } from './bounded-text.js';

export async function estimatedUsage(inputTokens: number | Promise<number>, produced: BoundedText): Promise<Usage> {
  const [input, output] = await Promise.all([inputTokens, produced.countTokens()]);
  return { inputTokens: input, outputTokens: output };
}
