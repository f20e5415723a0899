/**
 * An upstream's non-streamed `chat.completion` JSON → canonical `ChatResult`.
 *
 * Accepts the variations OpenAI-compatible servers produce: reasoning in `reasoning_content` (DeepSeek,
 * vLLM) or `reasoning` (Ollama, OpenRouter, newer vLLM); tool-call arguments as a JSON string or, from some
 * servers, an object; tool calls without ids; `content` as a string or text parts; no usage at all.
 */
import { UpstreamError } from '../../core/api-error.js';
import type { ChatResult } from '../../core/chat.js';
import { decodeUpstreamError } from './decode-upstream-error.js';
import { BoundedText } from '../../tokens/bounded-text.js';
import { estimateUsage } from './estimate-usage.js';
import { decodeFinishReason } from './map-finish-reason.js';
import { decodeUsage } from './map-usage.js';
import { toolCallArgumentsText } from './tool-call-arguments.js';
import { generateToolCallId, type UpstreamDecodeContext } from './upstream-decode-context.js';
import type { UpstreamChatCompletion, UpstreamMessage } from './wire-types.js';

function messageText(content: UpstreamMessage['content']): string {
  if (typeof content === 'string') {
    return content;
  }
  if (Array.isArray(content)) {
    return content.map((part) => (part && typeof part.text === 'string' ? part.text : '')).join('');
  }
  return '';
}

/** The reasoning text of a message or delta; servers that send both names send the same text. */
export function reasoningText(message: UpstreamMessage): string {
  if (typeof message.reasoning_content === 'string') {
    return message.reasoning_content;
  }
  return typeof message.reasoning === 'string' ? message.reasoning : '';
}

function producedText(content: ChatResult['content']): BoundedText {
  const produced = new BoundedText();
  for (const part of content) {
    produced.append(part.type === 'tool-call' ? part.name + part.arguments : part.text);
  }
  return produced;
}

export async function decodeChatCompletion(
  completion: UpstreamChatCompletion,
  context: UpstreamDecodeContext = { provider: 'upstream' },
): Promise<ChatResult> {
  if (completion.error !== undefined && completion.error !== null) {
    throw decodeUpstreamError(context.provider, completion.error);
  }
  const choice = completion.choices?.[0];
  const message = choice?.message;
  if (!choice || !message || typeof message !== 'object') {
    throw new UpstreamError(context.provider, 502, null, `Upstream ${context.provider} answered without a message`);
  }
  const newId = context.generateToolCallId ?? generateToolCallId;
  const content: ChatResult['content'] = [];
  const reasoning = reasoningText(message);
  if (reasoning.length > 0) {
    content.push({ type: 'reasoning', text: reasoning });
  }
  const text = messageText(message.content) || (typeof message.refusal === 'string' ? message.refusal : '');
  if (text.length > 0) {
    content.push({ type: 'text', text });
  }
  let hasToolCalls = false;
  for (const call of message.tool_calls ?? []) {
    if (!call?.function || typeof call.function.name !== 'string') {
      continue;
    }
    hasToolCalls = true;
    content.push({
      type: 'tool-call',
      id: typeof call.id === 'string' && call.id.length > 0 ? call.id : newId(),
      name: call.function.name,
      arguments: toolCallArgumentsText(call.function.arguments),
    });
  }
  const usage = decodeUsage(completion.usage) ?? (await estimateUsage(context, producedText(content)));
  const result: ChatResult = { content, finishReason: decodeFinishReason(choice.finish_reason, hasToolCalls), usage };
  if (typeof choice.stop_reason === 'string') {
    result.stopSequence = choice.stop_reason;
  }
  return result;
}
