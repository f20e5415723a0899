/**
 * Finish reasons between the canonical core and the chat-completions wire, both directions.
 */
import type { FinishReason } from '../../core/chat.js';
import type { ChatFinishReasonWire } from './wire-types.js';

/**
 * Canonical → our wire. The chat dialect has no `error` or `other`; a stream that ended for such a reason
 * still ended, and `stop` is what OpenAI clients handle without surprise.
 */
export function encodeFinishReason(reason: FinishReason): ChatFinishReasonWire {
  switch (reason) {
    case 'length':
      return 'length';
    case 'tool-calls':
      return 'tool_calls';
    case 'content-filter':
      return 'content_filter';
    case 'stop':
    case 'error':
    case 'other':
      return 'stop';
  }
}

/**
 * Upstream wire → canonical. Some local servers (older Ollama, some llama.cpp templates) answer `stop`
 * although the turn ends in tool calls; clients then never run the tools, so a turn with tool calls is
 * `tool-calls` whatever the upstream said, unless it was cut by the length limit.
 */
export function decodeFinishReason(reason: string | null | undefined, hasToolCalls: boolean): FinishReason {
  let decoded: FinishReason;
  switch (reason) {
    case 'stop':
    case 'eos':
      decoded = 'stop';
      break;
    case 'length':
      decoded = 'length';
      break;
    case 'tool_calls':
    case 'function_call':
      decoded = 'tool-calls';
      break;
    case 'content_filter':
      decoded = 'content-filter';
      break;
    case 'error':
      decoded = 'error';
      break;
    default:
      decoded = 'other';
  }
  if (hasToolCalls && decoded !== 'length' && decoded !== 'content-filter' && decoded !== 'error') {
    return 'tool-calls';
  }
  return decoded;
}
