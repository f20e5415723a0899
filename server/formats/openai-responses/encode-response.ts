/**
 * Canonical `ChatResult` → the Responses `Response` object of a non-streamed call.
 *
 * Output items, in content order: each reasoning part a `reasoning` item (its text as one summary), each run
 * of text parts one assistant `message` item, each tool call a `function_call` item whose `call_id` is the
 * tool call id (and whose `namespace` names the caller's `namespace` tool when the function came from one).
 * The streaming encoder produces the same items in the same order with the same ids.
 */
import type { ChatResult, ReasoningPart, ToolCallPart } from '../../core/chat.js';
import { encodeUsage } from './encode-usage.js';
import { encryptedContentOf } from './encrypted-reasoning.js';
import { mapFinishReason } from './map-finish-reason.js';
import { buildResponseObject, namespaceOf, unixSecondsNow, type ResponseMeta } from './response-object.js';
import type {
  OutputFunctionCall,
  OutputItem,
  OutputMessage,
  OutputReasoning,
  OutputText,
  ResponseObject,
} from './wire-types.js';

/**
 * A message item as the encoders make it: exactly one `output_text` part (they never produce refusal parts), so
 * the part can be extended in place.
 */
export type TextMessageItem = OutputMessage & { content: [OutputText] };

export function encodeResponse(result: ChatResult, meta: ResponseMeta): ResponseObject {
  const output: OutputItem[] = [];
  // The message item the next text part extends: set while it is the last output item.
  let message: TextMessageItem | undefined;
  for (const part of result.content) {
    if (part.type === 'text') {
      if (part.text === '') {
        continue;
      }
      if (message) {
        message.content[0].text += part.text;
      } else {
        message = messageItem(meta.generateId('msg'), part.text, 'completed');
        output.push(message);
      }
    } else if (part.type === 'reasoning') {
      const item = reasoningItem(part, meta);
      if (item) {
        output.push(item);
        message = undefined;
      }
    } else {
      output.push(functionCallItem(part, meta));
      message = undefined;
    }
  }

  const outcome = mapFinishReason(result.finishReason);
  const last = output[output.length - 1];
  if (outcome.status === 'incomplete' && last?.type === 'message') {
    last.status = 'incomplete';
  }
  return buildResponseObject(meta, {
    status: outcome.status,
    output,
    usage: encodeUsage(result.usage),
    error: outcome.error,
    incompleteDetails: outcome.incompleteDetails,
    completedAt: outcome.status === 'completed' ? (meta.now ?? unixSecondsNow)() : null,
  });
}

export function messageItem(id: string, text: string, status: OutputMessage['status']): TextMessageItem {
  return {
    id,
    type: 'message',
    role: 'assistant',
    status,
    content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
  };
}

function reasoningItem(part: ReasoningPart, meta: ResponseMeta): OutputReasoning | undefined {
  const encryptedContent = encryptedContentOf(part);
  if (part.text === '' && encryptedContent === undefined) {
    return undefined;
  }
  const item: OutputReasoning = {
    id: part.itemId ?? meta.generateId('rs'),
    type: 'reasoning',
    summary: part.text === '' ? [] : [{ type: 'summary_text', text: part.text }],
  };
  if (encryptedContent !== undefined) {
    item.encrypted_content = encryptedContent;
  }
  return item;
}

function functionCallItem(part: ToolCallPart, meta: ResponseMeta): OutputFunctionCall {
  return {
    id: part.itemId ?? meta.generateId('fc'),
    type: 'function_call',
    status: 'completed',
    call_id: part.id,
    name: part.name,
    ...namespaceOf(meta, part.name),
    arguments: part.arguments,
  };
}
