/**
 * Canonical `ChatResult` → Anthropic `Message` (the non-streamed answer of `POST /anthropic/v1/messages`).
 * Content blocks keep the canonical order; reasoning becomes `thinking` (or `redacted_thinking` when only opaque
 * data is known) and tool calls become `tool_use` with `input` parsed from the arguments (see `tool-input.ts`
 * for arguments that are not a JSON object).
 */
import type { ChatResult } from '../../core/chat.js';
import { toAnthropicStopReason } from './map-stop-reason.js';
import { toAnthropicUsage } from './map-usage.js';
import { toolInputFromArguments } from './tool-input.js';
import type { AnthropicContentBlock, AnthropicMessage } from './wire-types.js';

export interface MessageMeta {
  /** The message id (`msg_…`). */
  id: string;
  /** The model name the caller asked for, echoed back. */
  model: string;
}

export function encodeContentBlocks(content: ChatResult['content']): AnthropicContentBlock[] {
  const blocks: AnthropicContentBlock[] = [];
  for (const part of content) {
    switch (part.type) {
      case 'text':
        // No `citations` key unless there are citations: Anthropic omits it, and @ai-sdk/anthropic rejects `null` there.
        blocks.push({ type: 'text', text: part.text });
        break;
      case 'reasoning':
        if (part.redactedData !== undefined) {
          blocks.push({ type: 'redacted_thinking', data: part.redactedData });
        } else {
          blocks.push({ type: 'thinking', thinking: part.text, signature: part.signature ?? '' });
        }
        break;
      case 'tool-call':
        blocks.push({ type: 'tool_use', id: part.id, name: part.name, input: toolInputFromArguments(part.arguments) });
        break;
    }
  }
  return blocks;
}

export function encodeMessage(result: ChatResult, meta: MessageMeta): AnthropicMessage {
  return {
    id: meta.id,
    type: 'message',
    role: 'assistant',
    model: meta.model,
    content: encodeContentBlocks(result.content),
    stop_reason: toAnthropicStopReason(result.finishReason, result.stopSequence),
    stop_sequence: result.finishReason === 'stop' ? (result.stopSequence ?? null) : null,
    usage: toAnthropicUsage(result.usage),
  };
}
