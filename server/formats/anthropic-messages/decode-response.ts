/**
 * An Anthropic upstream's `Message` (non-streamed answer) → canonical `ChatResult`. Blocks the canonical core
 * cannot carry (server tool use and results, which need server tools we never send) are skipped.
 */
import type { ChatResult, ReasoningPart } from '../../core/chat.js';
import { fromAnthropicStopReason } from './map-stop-reason.js';
import { fromAnthropicUsage } from './map-usage.js';
import { argumentsFromToolInput } from './tool-input.js';
import type { AnthropicUpstreamMessage } from './wire-types.js';

export function decodeMessage(message: AnthropicUpstreamMessage): ChatResult {
  const content: ChatResult['content'] = [];
  for (const block of message.content ?? []) {
    switch (block.type) {
      case 'text':
        content.push({ type: 'text', text: String(block.text ?? '') });
        break;
      case 'thinking': {
        const part: ReasoningPart = { type: 'reasoning', text: String(block.thinking ?? '') };
        if (typeof block.signature === 'string' && block.signature !== '') {
          part.signature = block.signature;
        }
        content.push(part);
        break;
      }
      case 'redacted_thinking':
        content.push({ type: 'reasoning', text: '', redactedData: String(block.data ?? '') });
        break;
      case 'tool_use':
        content.push({
          type: 'tool-call',
          id: String(block.id),
          name: String(block.name),
          arguments: argumentsFromToolInput(block.input),
        });
        break;
    }
  }
  const result: ChatResult = {
    content,
    finishReason: fromAnthropicStopReason(message.stop_reason),
    usage: fromAnthropicUsage(message.usage),
  };
  if (message.stop_reason === 'stop_sequence' && typeof message.stop_sequence === 'string') {
    result.stopSequence = message.stop_sequence;
  }
  return result;
}
