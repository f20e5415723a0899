/**
 * Canonical `ChatCallOptions` → the body we POST to an OpenAI-compatible upstream's `/chat/completions`.
 *
 * - System messages stay where they are, as `system` messages (every OpenAI-compatible server takes them
 *   anywhere), with their text joined into one string, which local chat templates handle best.
 * - Reasoning parts of earlier assistant turns are not sent: OpenAI rejects unknown message fields and chat
 *   templates of reasoning models drop earlier reasoning anyway.
 * - Each tool result is its own `tool` message. Tool messages take only text, so images a tool returned are
 *   sent in one `user` message right after the run of tool messages (a user message between tool messages
 *   would break the assistant → tools pairing that upstreams check).
 * - `tool_choice` and `parallel_tool_calls` are sent only with tools: OpenAI rejects them otherwise.
 * - Streaming asks for `stream_options.include_usage`, so the last chunk carries the usage we bill.
 */
import type { ChatCallOptions, ChatMessage, ImagePart, ResponseFormat, TextPart, ToolChoice } from '../../core/chat.js';
import type { CallWarning } from '../../core/call-context.js';
import type {
  UpstreamChatRequest,
  UpstreamContentPart,
  UpstreamImageContentPart,
  UpstreamRequestMessage,
  UpstreamResponseFormat,
  UpstreamToolChoice,
} from './wire-types.js';

/** What differs between OpenAI-compatible upstreams, decided by the provider from its configuration. */
export interface ChatRequestDialect {
  /**
   * OpenAI's reasoning models accept only `max_completion_tokens`; Ollama, LM Studio and older llama.cpp
   * know only `max_tokens`.
   */
  maxTokensField: 'max_tokens' | 'max_completion_tokens';
  /** OpenAI rejects the unknown `top_k`; vLLM, llama.cpp and Ollama take it. */
  topK: boolean;
}

export interface EncodeChatRequestOptions {
  stream: boolean;
  dialect?: Partial<ChatRequestDialect>;
  /** Told about options the upstream has no field for. */
  warn?: (warning: CallWarning) => void;
}

const DEFAULT_DIALECT: ChatRequestDialect = { maxTokensField: 'max_tokens', topK: true };

function imageUrl(image: ImagePart): string {
  if (image.url) {
    return image.url;
  }
  return `data:${image.mediaType ?? 'application/octet-stream'};base64,${image.data ?? ''}`;
}

function encodeImage(image: ImagePart): UpstreamImageContentPart {
  const part: UpstreamImageContentPart = { type: 'image_url', image_url: { url: imageUrl(image) } };
  if (image.detail) {
    part.image_url.detail = image.detail;
  }
  return part;
}

function joinText(parts: Array<{ type: string; text?: string }>): string {
  return parts
    .filter((part): part is TextPart => part.type === 'text')
    .map((part) => part.text)
    .join('\n\n');
}

/** A single text stays a plain string (what every server accepts); anything richer becomes parts. */
function encodeUserContent(content: Array<TextPart | ImagePart>): string | UpstreamContentPart[] {
  const [first] = content;
  if (content.length === 1 && first?.type === 'text') {
    return first.text;
  }
  return content.map((part) => (part.type === 'text' ? { type: 'text' as const, text: part.text } : encodeImage(part)));
}

function encodeMessages(messages: ChatMessage[]): UpstreamRequestMessage[] {
  const wire: UpstreamRequestMessage[] = [];
  let pendingImages: ImagePart[] = [];
  const flushImages = (): void => {
    if (pendingImages.length > 0) {
      wire.push({ role: 'user', content: pendingImages.map(encodeImage) });
      pendingImages = [];
    }
  };
  for (const message of messages) {
    if (message.role !== 'tool') {
      flushImages();
    }
    switch (message.role) {
      case 'system':
        wire.push({ role: 'system', content: joinText(message.content) });
        break;
      case 'user':
        wire.push({ role: 'user', content: encodeUserContent(message.content) });
        break;
      case 'assistant': {
        const text = message.content
          .filter((part): part is TextPart => part.type === 'text')
          .map((part) => part.text)
          .join('');
        const toolCalls = message.content.flatMap((part) =>
          part.type === 'tool-call'
            ? [
                {
                  id: part.id,
                  type: 'function' as const,
                  function: { name: part.name, arguments: part.arguments === '' ? '{}' : part.arguments },
                },
              ]
            : [],
        );
        if (toolCalls.length > 0) {
          wire.push({ role: 'assistant', content: text.length > 0 ? text : null, tool_calls: toolCalls });
        } else {
          wire.push({ role: 'assistant', content: text });
        }
        break;
      }
      case 'tool':
        for (const result of message.content) {
          const images = result.content.filter((part): part is ImagePart => part.type === 'image');
          pendingImages.push(...images);
          wire.push({ role: 'tool', tool_call_id: result.toolCallId, content: joinText(result.content) });
        }
        break;
    }
  }
  flushImages();
  return wire;
}

function encodeToolChoice(choice: ToolChoice): UpstreamToolChoice {
  return choice.type === 'tool' ? { type: 'function', function: { name: choice.name } } : choice.type;
}

function encodeResponseFormat(format: ResponseFormat): UpstreamResponseFormat {
  switch (format.type) {
    case 'text':
      return { type: 'text' };
    case 'json':
      return { type: 'json_object' };
    case 'json-schema': {
      const spec: Extract<UpstreamResponseFormat, { type: 'json_schema' }>['json_schema'] = {
        name: format.name,
        schema: format.schema,
      };
      if (format.description !== undefined) {
        spec.description = format.description;
      }
      if (format.strict !== undefined) {
        spec.strict = format.strict;
      }
      return { type: 'json_schema', json_schema: spec };
    }
  }
}

export function encodeChatRequest(
  options: ChatCallOptions,
  upstreamModel: string,
  settings: EncodeChatRequestOptions,
): UpstreamChatRequest {
  const dialect: ChatRequestDialect = { ...DEFAULT_DIALECT, ...settings.dialect };
  const warn = settings.warn ?? (() => {});
  const body: UpstreamChatRequest = {
    model: upstreamModel,
    messages: encodeMessages(options.messages),
    stream: settings.stream,
  };
  if (settings.stream) {
    body.stream_options = { include_usage: true };
  }
  if (options.tools && options.tools.length > 0) {
    body.tools = options.tools.map((tool) => ({
      type: 'function' as const,
      function: {
        name: tool.name,
        ...(tool.description !== undefined ? { description: tool.description } : {}),
        parameters: tool.parameters,
        ...(tool.strict !== undefined ? { strict: tool.strict } : {}),
      },
    }));
    if (options.toolChoice) {
      body.tool_choice = encodeToolChoice(options.toolChoice);
    }
    if (options.parallelToolCalls !== undefined) {
      body.parallel_tool_calls = options.parallelToolCalls;
    }
  }
  if (options.maxOutputTokens !== undefined) {
    body[dialect.maxTokensField] = options.maxOutputTokens;
  }
  if (options.temperature !== undefined) {
    body.temperature = options.temperature;
  }
  if (options.topP !== undefined) {
    body.top_p = options.topP;
  }
  if (options.topK !== undefined) {
    if (dialect.topK) {
      body.top_k = options.topK;
    } else {
      warn({ field: 'top_k', reason: 'the upstream does not support top_k; ignored' });
    }
  }
  if (options.stopSequences && options.stopSequences.length > 0) {
    body.stop = options.stopSequences;
  }
  if (options.seed !== undefined) {
    body.seed = options.seed;
  }
  if (options.user !== undefined) {
    body.user = options.user;
  }
  if (options.responseFormat) {
    body.response_format = encodeResponseFormat(options.responseFormat);
  }
  if (options.reasoning?.effort !== undefined) {
    body.reasoning_effort = options.reasoning.effort;
  }
  if (options.reasoning?.budgetTokens !== undefined) {
    warn({
      field: 'reasoning.budget_tokens',
      reason: 'OpenAI-compatible upstreams take no reasoning token budget; ignored',
    });
  }
  return body;
}
