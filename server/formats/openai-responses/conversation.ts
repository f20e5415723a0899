/**
 * The canonical conversation stored with a response: what the next turn's `previous_response_id` loads.
 *
 * It is the previous conversation, this request's input messages and the assistant turn decoded back from
 * the response's own output items (so the items keep the ids a later `item_reference` or replay uses, and
 * reasoning keeps its opaque state). `instructions` are not part of it: OpenAI does not carry them over.
 */
import type { ChatMessage } from '../../core/chat.js';
import { decodeInputItems } from './decode-input-items.js';
import type { ResponseObject } from './wire-types.js';

export function conversationAfterTurn(
  history: readonly ChatMessage[],
  inputMessages: readonly ChatMessage[],
  response: Pick<ResponseObject, 'output'>,
): ChatMessage[] {
  const output = decodeInputItems(response.output, {
    resolveItem: () => undefined,
    warn: () => undefined,
  });
  return [...history, ...inputMessages, ...output];
}
