/**
 * Anthropic Messages content blocks → canonical message parts: text, image, document and `tool_result` blocks,
 * and the `system`, user and assistant turns built from them (a user turn splits into user and tool messages).
 */
import type {
  AssistantMessage,
  ChatMessage,
  ImagePart,
  ReasoningPart,
  TextPart,
  ToolCallPart,
  ToolResultPart,
} from '../../core/chat.js';
import { noteCacheControl, type Warn } from './decode-warnings.js';
import { argumentsFromToolInput } from './tool-input.js';
import type {
  AnthropicContentBlockParam,
  AnthropicDocumentBlockParam,
  AnthropicImageBlockParam,
  AnthropicTextBlockParam,
  AnthropicToolResultBlockParam,
} from './wire-types.js';

/*
 * About the block casts below (`block as AnthropicTextBlockParam` after `block.type === 'text'`, …): the
 * generated block unions end in the catch-all `AnthropicOtherBlockParam` (`type: string` plus any key), which a
 * `type` comparison cannot exclude, so TypeScript does not narrow them. Each cast follows the `type` check that
 * justifies it.
 */

function decodeTextBlock(block: AnthropicTextBlockParam, warn: Warn): TextPart {
  noteCacheControl(block, warn);
  if (Array.isArray(block.citations) && block.citations.length > 0) {
    warn('citations', 'citations are not supported; the text is kept without them');
  }
  return { type: 'text', text: block.text };
}

function decodeImageBlock(block: AnthropicImageBlockParam, warn: Warn): ImagePart | null {
  noteCacheControl(block, warn);
  const source = block.source;
  if (source.type === 'base64') {
    return { type: 'image', data: source.data, mediaType: source.media_type };
  }
  if (source.type === 'url') {
    return { type: 'image', url: source.url };
  }
  warn(
    'image.source',
    `image source type '${source.type}' is not supported (Files API ids cannot be resolved); the image was dropped`,
  );
  return null;
}

/** Text documents become plain text; PDFs, URLs and file ids cannot be carried and are dropped. */
function decodeDocumentBlock(block: AnthropicDocumentBlockParam, warn: Warn): Array<TextPart | ImagePart> {
  noteCacheControl(block, warn);
  const source = block.source;
  if (source.type === 'text' && typeof source.data === 'string') {
    warn('document', 'document blocks are not supported; text documents are sent as plain text, others are dropped');
    return [{ type: 'text', text: source.data }];
  }
  if (source.type === 'content') {
    warn('document', 'document blocks are not supported; text documents are sent as plain text, others are dropped');
    const content = source.content as string | Array<AnthropicTextBlockParam | AnthropicImageBlockParam>;
    if (typeof content === 'string') {
      return [{ type: 'text', text: content }];
    }
    const parts: Array<TextPart | ImagePart> = [];
    for (const inner of content) {
      if (inner.type === 'text') {
        parts.push(decodeTextBlock(inner, warn));
      } else if (inner.type === 'image') {
        const image = decodeImageBlock(inner, warn);
        if (image) {
          parts.push(image);
        }
      }
    }
    return parts;
  }
  warn('document', 'document blocks are not supported; text documents are sent as plain text, others are dropped');
  return [];
}

function decodeToolResultBlock(block: AnthropicToolResultBlockParam, warn: Warn): ToolResultPart {
  noteCacheControl(block, warn);
  const content: Array<TextPart | ImagePart> = [];
  if (typeof block.content === 'string') {
    content.push({ type: 'text', text: block.content });
  } else if (Array.isArray(block.content)) {
    for (const inner of block.content) {
      if (inner.type === 'text') {
        content.push(decodeTextBlock(inner as AnthropicTextBlockParam, warn));
      } else if (inner.type === 'image') {
        const image = decodeImageBlock(inner as AnthropicImageBlockParam, warn);
        if (image) {
          content.push(image);
        }
      } else if (inner.type === 'document') {
        content.push(...decodeDocumentBlock(inner as AnthropicDocumentBlockParam, warn));
      } else {
        warn(
          `tool_result.content.${inner.type}`,
          `'${inner.type}' blocks in tool results are not supported; the block was dropped`,
        );
      }
    }
  }
  const part: ToolResultPart = { type: 'tool-result', toolCallId: block.tool_use_id, content };
  if (block.is_error === true) {
    part.isError = true;
  }
  return part;
}

export function decodeSystemContent(content: string | AnthropicContentBlockParam[], warn: Warn): TextPart[] {
  if (typeof content === 'string') {
    return [{ type: 'text', text: content }];
  }
  const parts: TextPart[] = [];
  for (const block of content) {
    if (block.type === 'text') {
      parts.push(decodeTextBlock(block as AnthropicTextBlockParam, warn));
    } else {
      warn(
        `system.${block.type}`,
        `'${block.type}' blocks in a system prompt are not supported; the block was dropped`,
      );
    }
  }
  return parts;
}

/**
 * A user turn: runs of `tool_result` blocks become tool messages, runs of anything else user messages, in the
 * order the blocks came.
 */
export function decodeUserContent(content: string | AnthropicContentBlockParam[], warn: Warn): ChatMessage[] {
  if (typeof content === 'string') {
    return [{ role: 'user', content: [{ type: 'text', text: content }] }];
  }
  const messages: ChatMessage[] = [];
  let userParts: Array<TextPart | ImagePart> = [];
  let toolResults: ToolResultPart[] = [];
  const flushUser = () => {
    if (userParts.length > 0) {
      messages.push({ role: 'user', content: userParts });
      userParts = [];
    }
  };
  const flushTool = () => {
    if (toolResults.length > 0) {
      messages.push({ role: 'tool', content: toolResults });
      toolResults = [];
    }
  };
  for (const block of content) {
    if (block.type === 'tool_result') {
      flushUser();
      toolResults.push(decodeToolResultBlock(block as AnthropicToolResultBlockParam, warn));
      continue;
    }
    flushTool();
    switch (block.type) {
      case 'text':
        userParts.push(decodeTextBlock(block as AnthropicTextBlockParam, warn));
        break;
      case 'image': {
        const image = decodeImageBlock(block as AnthropicImageBlockParam, warn);
        if (image) {
          userParts.push(image);
        }
        break;
      }
      case 'document':
        userParts.push(...decodeDocumentBlock(block as AnthropicDocumentBlockParam, warn));
        break;
      default:
        noteCacheControl(block as { cache_control?: unknown }, warn);
        warn(
          `messages.content.${block.type}`,
          `'${block.type}' blocks in a user message are not supported; the block was dropped`,
        );
    }
  }
  flushUser();
  flushTool();
  return messages;
}

export function decodeAssistantContent(
  content: string | AnthropicContentBlockParam[],
  warn: Warn,
): AssistantMessage | null {
  if (typeof content === 'string') {
    return { role: 'assistant', content: [{ type: 'text', text: content }] };
  }
  const parts: Array<TextPart | ReasoningPart | ToolCallPart> = [];
  for (const block of content) {
    switch (block.type) {
      case 'text':
        parts.push(decodeTextBlock(block as AnthropicTextBlockParam, warn));
        break;
      case 'tool_use': {
        const toolUse = block as { id: string; name: string; input: unknown; cache_control?: unknown };
        noteCacheControl(toolUse, warn);
        parts.push({
          type: 'tool-call',
          id: toolUse.id,
          name: toolUse.name,
          arguments: argumentsFromToolInput(toolUse.input),
        });
        break;
      }
      case 'thinking': {
        const thinking = block as { thinking: string; signature?: string };
        const part: ReasoningPart = { type: 'reasoning', text: thinking.thinking };
        if (thinking.signature) {
          part.signature = thinking.signature;
        }
        parts.push(part);
        break;
      }
      case 'redacted_thinking':
        parts.push({ type: 'reasoning', text: '', redactedData: (block as { data: string }).data });
        break;
      default:
        noteCacheControl(block as { cache_control?: unknown }, warn);
        warn(
          `messages.content.${block.type}`,
          `'${block.type}' blocks in an assistant message are not supported; the block was dropped`,
        );
    }
  }
  return parts.length > 0 ? { role: 'assistant', content: parts } : null;
}
