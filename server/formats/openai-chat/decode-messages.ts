/**
 * Chat-completions `messages` → canonical `ChatMessage[]`.
 *
 * Decisions: `developer` is a system message; image URLs, data URLs included, stay in `ImagePart.url` (the
 * canonical type allows `data:` URLs there, so nothing is lost and nothing is re-encoded); an assistant's
 * `reasoning_content` (or `reasoning`) becomes a leading `ReasoningPart`; each `tool` message becomes its own
 * `ToolMessage` with one result (consecutive ones are not merged). Content we cannot carry (audio, files, the
 * deprecated `function` role) is a 400 naming the exact element, never silently dropped.
 */
import { ApiError } from '../../core/api-error.js';
import type { AssistantMessage, ChatMessage, ImagePart, TextPart, ToolCallPart } from '../../core/chat.js';
import type { CallWarning } from '../../core/call-context.js';
import type { ChatContentPart, ChatImageContentPart, ChatRequestMessage } from './wire-types.js';

function unsupportedPart(part: ChatContentPart, param: string, where: string): ApiError {
  return new ApiError(400, `Content parts of type '${String(part.type)}' are not supported in ${where} messages.`, {
    param,
  });
}

function decodeImage(part: ChatImageContentPart, param: string): ImagePart {
  const url = part.image_url?.url;
  if (typeof url !== 'string' || url.length === 0) {
    throw new ApiError(400, 'image_url.url must be a non-empty URL.', { param: `${param}.image_url.url` });
  }
  const image: ImagePart = { type: 'image', url };
  const detail = part.image_url.detail;
  if (detail === 'low' || detail === 'high' || detail === 'auto') {
    image.detail = detail;
  }
  return image;
}

/** Text-only content (system, developer). */
function decodeTextContent(content: string | ChatContentPart[], param: string, where: string): TextPart[] {
  if (typeof content === 'string') {
    return [{ type: 'text', text: content }];
  }
  return content.map((part, index) => {
    if (part.type === 'text' && typeof part.text === 'string') {
      return { type: 'text', text: part.text };
    }
    throw unsupportedPart(part, `${param}[${index}]`, where);
  });
}

/** Text and images (user messages, tool results). */
function decodeRichContent(
  content: string | ChatContentPart[],
  param: string,
  where: string,
): Array<TextPart | ImagePart> {
  if (typeof content === 'string') {
    return [{ type: 'text', text: content }];
  }
  return content.map((part, index) => {
    if (part.type === 'text' && typeof part.text === 'string') {
      return { type: 'text', text: part.text };
    }
    if (part.type === 'image_url') {
      return decodeImage(part, `${param}[${index}]`);
    }
    throw unsupportedPart(part, `${param}[${index}]`, where);
  });
}

function decodeAssistant(message: Extract<ChatRequestMessage, { role: 'assistant' }>, param: string): AssistantMessage {
  const content: AssistantMessage['content'] = [];
  // `reasoning` (Ollama's and OpenRouter's name) is not in the contract, which accepts undeclared message
  // fields; it is read from the message as a plain record.
  const extensions: Record<string, unknown> = message;
  const reasoning = typeof message.reasoning_content === 'string' ? message.reasoning_content : extensions.reasoning;
  if (typeof reasoning === 'string' && reasoning.length > 0) {
    content.push({ type: 'reasoning', text: reasoning });
  }
  if (typeof message.content === 'string') {
    if (message.content.length > 0) {
      content.push({ type: 'text', text: message.content });
    }
  } else if (Array.isArray(message.content)) {
    message.content.forEach((part, index) => {
      if (part.type === 'text' && typeof part.text === 'string') {
        if (part.text.length > 0) {
          content.push({ type: 'text', text: part.text });
        }
      } else if (part.type === 'refusal' && typeof part.refusal === 'string') {
        content.push({ type: 'text', text: part.refusal });
      } else {
        throw unsupportedPart(part, `${param}.content[${index}]`, 'assistant');
      }
    });
  } else if (typeof message.refusal === 'string' && message.refusal.length > 0) {
    content.push({ type: 'text', text: message.refusal });
  }
  (message.tool_calls ?? []).forEach((call, index) => {
    if (call.type !== 'function' || !call.function) {
      throw new ApiError(400, `Tool calls of type '${String(call.type)}' are not supported.`, {
        param: `${param}.tool_calls[${index}].type`,
      });
    }
    const part: ToolCallPart = {
      type: 'tool-call',
      id: call.id,
      name: call.function.name,
      arguments: call.function.arguments ?? '',
    };
    content.push(part);
  });
  return { role: 'assistant', content };
}

export function decodeMessages(messages: ChatRequestMessage[], warn: (warning: CallWarning) => void): ChatMessage[] {
  let warnedName = false;
  return messages.map((message, index): ChatMessage => {
    const param = `messages[${index}]`;
    // The contract has no `function` role; the decoder still names it in a 400 (see the default case below).
    const role: string = message.role;
    if ('name' in message && typeof message.name === 'string' && role !== 'function' && !warnedName) {
      warnedName = true;
      warn({ field: 'messages[].name', reason: 'participant names are not supported; ignored' });
    }
    switch (message.role) {
      case 'system':
      case 'developer':
        return { role: 'system', content: decodeTextContent(message.content, `${param}.content`, message.role) };
      case 'user':
        return { role: 'user', content: decodeRichContent(message.content, `${param}.content`, 'user') };
      case 'assistant':
        return decodeAssistant(message, param);
      case 'tool':
        return {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: message.tool_call_id,
              content: decodeRichContent(message.content, `${param}.content`, 'tool'),
            },
          ],
        };
      default:
        throw new ApiError(
          400,
          `Messages with role '${String((message as { role: unknown }).role)}' are not supported; use tools and tool messages.`,
          {
            param: `${param}.role`,
          },
        );
    }
  });
}
