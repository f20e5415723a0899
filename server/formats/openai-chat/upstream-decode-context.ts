/**
 * What the upstream decoders need besides the upstream's own bytes: who the upstream is (for errors), how
 * to estimate input tokens when it reports no usage, and how to name tool calls that arrive without an id.
 */
import { randomId } from '../../core/random-id.js';

export interface UpstreamDecodeContext {
  /** The provider id, named in errors. */
  provider: string;
  /** Input tokens of the call, for when the upstream sends no usage; 0 when absent. */
  estimateInputTokens?: () => Promise<number>;
  /** Ids for tool calls the upstream sent without one (some local servers do). */
  generateToolCallId?: () => string;
}

export function generateToolCallId(): string {
  return randomId('call');
}
