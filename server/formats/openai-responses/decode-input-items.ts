/**
 * Responses input items → canonical messages.
 *
 * Items come from three places and are decoded alike: the caller's `input`, output items of stored responses
 * that an `item_reference` names, and our own output items when a turn is appended to a stored conversation.
 * Assistant-side items (assistant messages, `reasoning`, `function_call`) that follow each other form one
 * assistant turn, and consecutive `function_call_output`s one tool message, so a replayed tool round trip
 * reaches every provider in the shape it needs. Client-made item ids (`msg_<uuid>`, `fco_<uuid>`) are ignored.
 */
import { ApiError } from '../../core/api-error.js';
import type {
  AssistantMessage,
  ChatMessage,
  ImagePart,
  ReasoningPart,
  TextPart,
  ToolCallPart,
  ToolResultPart,
} from '../../core/chat.js';
import type { CallWarning } from '../../core/call-context.js';
import { opaqueReasoningFrom } from './encrypted-reasoning.js';
import type {
  FunctionCallItem,
  FunctionCallOutputItem,
  InputContentPart,
  InputMessageItem,
  ReasoningItem,
} from './wire-types.js';

export interface InputItemContext {
  /** Resolves an `item_reference` id to the stored output item, or undefined when there is none. */
  resolveItem: (id: string) => unknown;
  warn: (warning: CallWarning) => void;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function invalidInput(message: string): ApiError {
  return new ApiError(400, message, { param: 'input', code: 'invalid_value' });
}

/** Decodes a list of input items into canonical messages, merging assistant turns and tool results. */
export function decodeInputItems(items: readonly unknown[], context: InputItemContext): ChatMessage[] {
  const messages: ChatMessage[] = [];
  for (const item of items) {
    decodeItem(item, messages, context, true);
  }
  return messages;
}

function decodeItem(item: unknown, messages: ChatMessage[], context: InputItemContext, allowReference: boolean): void {
  if (!isRecord(item)) {
    throw invalidInput('Each input item must be an object.');
  }
  const type =
    item.type ?? (item.role !== undefined ? 'message' : item.id !== undefined ? 'item_reference' : undefined);
  switch (type) {
    case 'message':
      decodeMessage(item as unknown as InputMessageItem, messages, context);
      return;
    case 'function_call':
      appendAssistant(messages, [decodeFunctionCall(item as unknown as FunctionCallItem)]);
      return;
    case 'function_call_output':
      appendToolResult(messages, decodeFunctionCallOutput(item as unknown as FunctionCallOutputItem, context));
      return;
    case 'reasoning': {
      const reasoning = decodeReasoning(item as unknown as ReasoningItem);
      if (reasoning) {
        appendAssistant(messages, [reasoning]);
      }
      return;
    }
    case 'item_reference': {
      const id = item.id;
      if (typeof id !== 'string' || !allowReference) {
        throw invalidInput('An item_reference needs the string id of an output item of a stored response.');
      }
      const resolved = context.resolveItem(id);
      if (resolved === undefined) {
        throw new ApiError(404, `Item with id '${id}' not found.`, { param: 'input', code: 'item_not_found' });
      }
      decodeItem(resolved, messages, context, false);
      return;
    }
    default:
      if (typeof type !== 'string') {
        throw invalidInput('Each input item needs a type, or a role for a message.');
      }
      context.warn({
        field: `input.${type}`,
        reason: `input items of type '${type}' are not supported and were dropped`,
      });
  }
}

function decodeMessage(item: InputMessageItem, messages: ChatMessage[], context: InputItemContext): void {
  const role = item.role;
  const parts = typeof item.content === 'string' ? [{ type: 'input_text', text: item.content } as const] : item.content;
  if (!Array.isArray(parts)) {
    throw invalidInput(`The content of a ${String(role)} message must be a string or a list of content parts.`);
  }
  switch (role) {
    case 'user': {
      const content = parts.flatMap((part) => decodeUserPart(part, context, 'input'));
      if (content.length > 0) {
        messages.push({ role: 'user', content });
      }
      return;
    }
    case 'system':
    case 'developer': {
      const content = parts.flatMap((part) => decodeTextOnlyPart(part, role, context));
      if (content.length > 0) {
        messages.push({ role: 'system', content });
      }
      return;
    }
    case 'assistant':
      appendAssistant(
        messages,
        parts.flatMap((part) => decodeTextOnlyPart(part, role, context)),
      );
      return;
    default:
      throw invalidInput(`Unknown message role '${String(role)}'; expected user, assistant, system or developer.`);
  }
}

/** The text of a text-bearing part, or undefined for media parts. */
function textOf(part: InputContentPart): string | undefined {
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      return part.text;
    case 'refusal':
      return part.refusal;
    default:
      return undefined;
  }
}

function decodeUserPart(part: InputContentPart, context: InputItemContext, where: string): Array<TextPart | ImagePart> {
  const text = textOf(part);
  if (text !== undefined) {
    return text === '' ? [] : [{ type: 'text', text }];
  }
  if (part.type === 'input_image') {
    return [decodeImage(part, where)];
  }
  if (part.type === 'input_file') {
    context.warn({ field: `${where}.input_file`, reason: 'input_file content is not supported and was dropped' });
    return [];
  }
  const type = String((part as { type?: unknown }).type);
  context.warn({
    field: `${where}.content`,
    reason: `content parts of type '${type}' are not supported and were dropped`,
  });
  return [];
}

function decodeTextOnlyPart(part: InputContentPart, role: string, context: InputItemContext): TextPart[] {
  const text = textOf(part);
  if (text !== undefined) {
    return text === '' ? [] : [{ type: 'text', text }];
  }
  context.warn({
    field: 'input.content',
    reason: `${role} messages can only carry text; a '${String((part as { type?: unknown }).type)}' part was dropped`,
  });
  return [];
}

function decodeImage(part: Extract<InputContentPart, { type: 'input_image' }>, where: string): ImagePart {
  if (typeof part.image_url !== 'string' || part.image_url === '') {
    if (part.file_id) {
      throw new ApiError(
        400,
        'input_image with file_id is not supported; send the image as image_url (an http(s) or data: URL).',
        {
          param: where,
          code: 'unsupported_value',
        },
      );
    }
    throw new ApiError(400, 'input_image needs an image_url.', { param: where, code: 'invalid_value' });
  }
  const image: ImagePart = { type: 'image', url: part.image_url };
  // OpenAI's `original` detail level is not in the contract's enum (the spec validator rejects it on `input`);
  // the decoder still maps it, so the value is compared through a wider view.
  const detail: unknown = part.detail;
  if (part.detail === 'low' || part.detail === 'high' || part.detail === 'auto') {
    image.detail = part.detail;
  } else if (detail === 'original') {
    image.detail = 'high';
  }
  return image;
}

/** A replayed `namespace` (Codex sends back the one we put on the call) is not needed: `name` identifies the tool. */
function decodeFunctionCall(item: FunctionCallItem): ToolCallPart {
  if (typeof item.call_id !== 'string' || typeof item.name !== 'string') {
    throw invalidInput('A function_call item needs call_id and name.');
  }
  const call: ToolCallPart = { type: 'tool-call', id: item.call_id, name: item.name, arguments: item.arguments ?? '' };
  if (typeof item.id === 'string' && item.id !== '') {
    call.itemId = item.id;
  }
  return call;
}

function decodeFunctionCallOutput(item: FunctionCallOutputItem, context: InputItemContext): ToolResultPart {
  if (typeof item.call_id !== 'string') {
    throw invalidInput('A function_call_output item needs call_id.');
  }
  const output = item.output;
  let content: ToolResultPart['content'];
  if (typeof output === 'string') {
    content = [{ type: 'text', text: output }];
  } else if (Array.isArray(output)) {
    content = output.flatMap((part) => decodeUserPart(part, context, 'input.function_call_output'));
  } else {
    // Not in the contract, but some clients send the tool's JSON result unserialised.
    content = [{ type: 'text', text: JSON.stringify(output ?? null) }];
  }
  return { type: 'tool-result', toolCallId: item.call_id, content };
}

function decodeReasoning(item: ReasoningItem): ReasoningPart | undefined {
  const summaries = nonEmptyTexts(item.summary);
  // Engines that expose raw reasoning (vLLM, some compatible servers) send it as `content` without a summary.
  const texts = summaries.length > 0 ? summaries : nonEmptyTexts(item.content);
  const reasoning: ReasoningPart = {
    type: 'reasoning',
    text: texts.join('\n\n'),
    ...opaqueReasoningFrom(item.encrypted_content),
  };
  if (typeof item.id === 'string' && item.id !== '') {
    reasoning.itemId = item.id;
  }
  if (reasoning.text === '' && !reasoning.encryptedContent && !reasoning.signature && !reasoning.redactedData) {
    return undefined;
  }
  return reasoning;
}

function nonEmptyTexts(parts: ReadonlyArray<{ text: string }> | null | undefined): string[] {
  return (parts ?? []).map((part) => part.text).filter((text) => typeof text === 'string' && text !== '');
}

function appendAssistant(messages: ChatMessage[], parts: AssistantMessage['content']): void {
  if (parts.length === 0) {
    return;
  }
  const last = messages[messages.length - 1];
  if (last?.role === 'assistant') {
    last.content.push(...parts);
  } else {
    messages.push({ role: 'assistant', content: parts });
  }
}

function appendToolResult(messages: ChatMessage[], result: ToolResultPart): void {
  const last = messages[messages.length - 1];
  if (last?.role === 'tool') {
    last.content.push(result);
  } else {
    messages.push({ role: 'tool', content: [result] });
  }
}
