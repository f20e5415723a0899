/**
 * Canonical `ChatResult` → the non-streamed `chat.completion` object of our API.
 *
 * `content` is null only when the answer is nothing but tool calls (what openai-node and the AI SDK expect
 * then); reasoning goes to `reasoning_content`, the field DeepSeek and vLLM made the de-facto standard.
 */
import type { ChatResult } from '../../core/chat.js';
import { encodeFinishReason } from './map-finish-reason.js';
import { encodeUsage } from './map-usage.js';
import type { ChatCompletion, ChatCompletionMessage, ChatMessageToolCall } from './wire-types.js';

export interface ChatCompletionMeta {
  id: string;
  /** The model name as the caller asked for it. */
  model: string;
  /** Unix seconds. */
  created: number;
}

export function encodeChatCompletion(result: ChatResult, meta: ChatCompletionMeta): ChatCompletion {
  let text = '';
  let reasoning = '';
  const toolCalls: ChatMessageToolCall[] = [];
  for (const part of result.content) {
    if (part.type === 'text') {
      text += part.text;
    } else if (part.type === 'reasoning') {
      reasoning += part.text;
    } else {
      toolCalls.push({ id: part.id, type: 'function', function: { name: part.name, arguments: part.arguments } });
    }
  }
  const message: ChatCompletionMessage = {
    role: 'assistant',
    content: text.length === 0 && toolCalls.length > 0 ? null : text,
    refusal: null,
  };
  if (toolCalls.length > 0) {
    message.tool_calls = toolCalls;
  }
  if (reasoning.length > 0) {
    message.reasoning_content = reasoning;
  }
  return {
    id: meta.id,
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    choices: [{ index: 0, message, finish_reason: encodeFinishReason(result.finishReason), logprobs: null }],
    usage: encodeUsage(result.usage),
    system_fingerprint: null,
  };
}
