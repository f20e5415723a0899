/**
 * Folds a canonical stream into a whole result. Used by providers that only stream (the local model) and by
 * tests that compare a stream with its JSON twin.
 */
import type { ChatResult, ChatStreamPart, ReasoningPart, TextPart, ToolCallPart } from './chat.js';

export async function collectStream(parts: AsyncIterable<ChatStreamPart>): Promise<ChatResult> {
  const content: Array<TextPart | ReasoningPart | ToolCallPart> = [];
  const calls = new Map<number, ToolCallPart>();
  let result: Omit<ChatResult, 'content'> | undefined;
  for await (const part of parts) {
    const last = content[content.length - 1];
    switch (part.type) {
      case 'text-delta':
        if (last?.type === 'text') {
          last.text += part.text;
        } else {
          content.push({ type: 'text', text: part.text });
        }
        break;
      case 'reasoning-delta':
        if (last?.type === 'reasoning' && last.signature === undefined) {
          last.text += part.text;
        } else {
          content.push({ type: 'reasoning', text: part.text });
        }
        break;
      case 'reasoning-end': {
        let target = last?.type === 'reasoning' ? last : undefined;
        if (!target) {
          target = { type: 'reasoning', text: '' };
          content.push(target);
        }
        if (part.signature !== undefined) target.signature = part.signature;
        if (part.redactedData !== undefined) target.redactedData = part.redactedData;
        if (part.encryptedContent !== undefined) target.encryptedContent = part.encryptedContent;
        break;
      }
      case 'tool-call-start': {
        const call: ToolCallPart = { type: 'tool-call', id: part.id, name: part.name, arguments: '' };
        calls.set(part.index, call);
        content.push(call);
        break;
      }
      case 'tool-call-delta': {
        const call = calls.get(part.index);
        if (call) {
          call.arguments += part.argumentsDelta;
        }
        break;
      }
      case 'tool-call-end':
        break;
      case 'finish':
        result = { finishReason: part.finishReason, stopSequence: part.stopSequence, usage: part.usage };
        break;
    }
  }
  if (!result) {
    throw new Error('the stream ended without a finish part');
  }
  return { content, ...result };
}
