/**
 * Canonical finish reasons ↔ Anthropic `stop_reason`, both directions. Anthropic has no `error` or `other`
 * stop reason: those become `end_turn`, the value clients treat as "the turn is over".
 */
import type { FinishReason } from '../../core/chat.js';
import type { AnthropicStopReason } from './wire-types.js';

export function toAnthropicStopReason(
  finishReason: FinishReason,
  stopSequence: string | undefined,
): AnthropicStopReason {
  switch (finishReason) {
    case 'stop':
      return stopSequence === undefined ? 'end_turn' : 'stop_sequence';
    case 'length':
      return 'max_tokens';
    case 'tool-calls':
      return 'tool_use';
    case 'content-filter':
      return 'refusal';
    case 'error':
    case 'other':
      return 'end_turn';
  }
}

/** `pause_turn` (a server tool paused the turn) has no canonical meaning and becomes `other`. */
export function fromAnthropicStopReason(stopReason: string | null | undefined): FinishReason {
  switch (stopReason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'stop';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool-calls';
    case 'refusal':
      return 'content-filter';
    default:
      return 'other';
  }
}
