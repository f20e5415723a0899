/**
 * Anthropic Messages request (`POST /anthropic/v1/messages`) → canonical `ChatCallOptions`.
 *
 * The body has already passed the spec's validation; this module only translates. Fields the canonical core
 * cannot carry are reported through `warn` (once per field name) and dropped:
 * `cache_control` (anywhere in the body: one warning), `context_management`, `service_tier`, `container`,
 * `mcp_servers`, `inference_geo`, tool flags `eager_input_streaming`/`defer_loading`, `citations`, server tools,
 * and `document` blocks (text documents become text; other documents are dropped).
 *
 * Choices worth knowing:
 * - `role: "system"` entries inside `messages` (Claude Code sends them) stay system messages in place.
 * - One Anthropic user message may hold `tool_result` blocks and other blocks; it is split into canonical
 *   tool and user messages, keeping the order of the blocks.
 * - `thinking: {type: "enabled", budget_tokens}` → `reasoning.budgetTokens`; `{type: "adaptive"}` → `reasoning: {}`
 *   ("reason, the model decides how much"; no effort is invented, so an OpenAI upstream gets no
 *   `reasoning_effort` it might reject); `{type: "disabled"}` → no `reasoning`.
 * - `output_config.effort` (Claude Code sends `high`) → `reasoning.effort`, unless thinking is disabled.
 * - `output_config.format` (`json_schema`) → `responseFormat` `json-schema` named `output`.
 */
import type {
  AssistantMessage,
  CallWarning,
  ChatCallOptions,
  ChatMessage,
  ImagePart,
  ReasoningPart,
  TextPart,
  ToolCallPart,
  ToolChoice,
  ToolDefinition,
  ToolResultPart,
} from '../../providers/types.js';
import { argumentsFromToolInput } from './tool-input.js';
import type {
  AnthropicContentBlockParam,
  AnthropicDocumentBlockParam,
  AnthropicImageBlockParam,
  AnthropicMessagesRequest,
  AnthropicTextBlockParam,
  AnthropicToolChoice,
  AnthropicTool,
  AnthropicToolResultBlockParam,
  AnthropicToolUnion,
} from './wire-types.js';

export interface DecodedMessagesRequest {
  model: string;
  stream: boolean;
  options: ChatCallOptions;
}

/** Top-level fields accepted by the contract that no provider behind the canonical core honours. */
const UNHONOURED_TOP_LEVEL: ReadonlyArray<[keyof AnthropicMessagesRequest, string]> = [
  ['context_management', 'context editing is not supported; the conversation is sent as given'],
  ['service_tier', 'service tiers are not supported'],
  ['container', 'code-execution containers are not supported'],
  ['mcp_servers', 'the MCP connector is not supported; connect MCP tools on the client side'],
  ['inference_geo', 'inference region selection is not supported'],
];

const CACHE_CONTROL_REASON = 'prompt caching hints are not forwarded; the provider caches on its own terms';

type Warn = (field: string, reason: string) => void;

function createWarnOnce(warn: (warning: CallWarning) => void): Warn {
  const seen = new Set<string>();
  return (field, reason) => {
    if (!seen.has(field)) {
      seen.add(field);
      warn({ field, reason });
    }
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function hasValue(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/*
 * About the block casts below (`block as AnthropicTextBlockParam` after `block.type === 'text'`, …): the
 * generated block unions end in the catch-all `AnthropicOtherBlockParam` (`type: string` plus any key), which a
 * `type` comparison cannot exclude, so TypeScript does not narrow them. Each cast follows the `type` check that
 * justifies it.
 */

/** Every block type may carry `cache_control`; one warning covers the whole body. */
function noteCacheControl(block: { cache_control?: unknown }, warn: Warn): void {
  if (hasValue(block.cache_control)) {
    warn('cache_control', CACHE_CONTROL_REASON);
  }
}

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
  warn('image.source', `image source type '${source.type}' is not supported (Files API ids cannot be resolved); the image was dropped`);
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
        warn(`tool_result.content.${inner.type}`, `'${inner.type}' blocks in tool results are not supported; the block was dropped`);
      }
    }
  }
  const part: ToolResultPart = { type: 'tool-result', toolCallId: block.tool_use_id, content };
  if (block.is_error === true) {
    part.isError = true;
  }
  return part;
}

function decodeSystemContent(content: string | AnthropicContentBlockParam[], warn: Warn): TextPart[] {
  if (typeof content === 'string') {
    return [{ type: 'text', text: content }];
  }
  const parts: TextPart[] = [];
  for (const block of content) {
    if (block.type === 'text') {
      parts.push(decodeTextBlock(block as AnthropicTextBlockParam, warn));
    } else {
      warn(`system.${block.type}`, `'${block.type}' blocks in a system prompt are not supported; the block was dropped`);
    }
  }
  return parts;
}

/**
 * A user turn: runs of `tool_result` blocks become tool messages, runs of anything else user messages, in the
 * order the blocks came.
 */
function decodeUserContent(content: string | AnthropicContentBlockParam[], warn: Warn): ChatMessage[] {
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
        warn(`messages.content.${block.type}`, `'${block.type}' blocks in a user message are not supported; the block was dropped`);
    }
  }
  flushUser();
  flushTool();
  return messages;
}

function decodeAssistantContent(content: string | AnthropicContentBlockParam[], warn: Warn): AssistantMessage | null {
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
        parts.push({ type: 'tool-call', id: toolUse.id, name: toolUse.name, arguments: argumentsFromToolInput(toolUse.input) });
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
        warn(`messages.content.${block.type}`, `'${block.type}' blocks in an assistant message are not supported; the block was dropped`);
    }
  }
  return parts.length > 0 ? { role: 'assistant', content: parts } : null;
}

/**
 * A client tool has no `type` or `custom`. A type guard rather than a `type` check: the generated
 * `AnthropicServerTool` has `type: string`, which `custom` also matches, so the union cannot be narrowed by
 * comparing `type`.
 */
function isClientTool(tool: AnthropicToolUnion): tool is AnthropicTool {
  return tool.type === undefined || tool.type === null || tool.type === 'custom';
}

function decodeTools(tools: AnthropicToolUnion[], warn: Warn): ToolDefinition[] {
  const definitions: ToolDefinition[] = [];
  for (const tool of tools) {
    noteCacheControl(tool, warn);
    if (!isClientTool(tool)) {
      warn(`tools.${tool.name}`, `server tool '${tool.type}' is not supported; the tool was dropped`);
      continue;
    }
    if (hasValue(tool.eager_input_streaming)) {
      warn('eager_input_streaming', 'tool input is always streamed as it is produced; the flag is ignored');
    }
    if (hasValue(tool.defer_loading)) {
      warn('defer_loading', 'tool search is not supported; deferred tools are sent with the others');
    }
    const definition: ToolDefinition = { name: tool.name, parameters: tool.input_schema ?? { type: 'object' } };
    if (typeof tool.description === 'string') {
      definition.description = tool.description;
    }
    if (typeof tool.strict === 'boolean') {
      definition.strict = tool.strict;
    }
    definitions.push(definition);
  }
  return definitions;
}

function decodeToolChoice(choice: AnthropicToolChoice): { toolChoice: ToolChoice; parallelToolCalls?: boolean } {
  const parallel = 'disable_parallel_tool_use' in choice && choice.disable_parallel_tool_use === true ? { parallelToolCalls: false } : {};
  switch (choice.type) {
    case 'auto':
      return { toolChoice: { type: 'auto' }, ...parallel };
    case 'any':
      return { toolChoice: { type: 'required' }, ...parallel };
    case 'tool':
      return { toolChoice: { type: 'tool', name: choice.name }, ...parallel };
    case 'none':
      return { toolChoice: { type: 'none' } };
  }
}

function decodeReasoning(body: AnthropicMessagesRequest, warn: Warn): ChatCallOptions['reasoning'] {
  let reasoning: ChatCallOptions['reasoning'];
  const thinking = body.thinking;
  if (thinking) {
    if (thinking.type === 'enabled' && typeof thinking.budget_tokens === 'number') {
      reasoning = { budgetTokens: thinking.budget_tokens };
    } else if (thinking.type === 'adaptive') {
      reasoning = {};
    } else if (thinking.type !== 'disabled') {
      warn('thinking.type', `thinking type '${thinking.type}' is not supported; the model's default applies`);
    }
  }
  const effort = body.output_config?.effort;
  if (typeof effort === 'string') {
    if (thinking?.type === 'disabled') {
      warn('output_config.effort', 'effort is carried as reasoning effort, and thinking is disabled; it was dropped');
    } else {
      reasoning = { ...reasoning, effort };
    }
  }
  return reasoning;
}

function decodeOutputConfig(body: AnthropicMessagesRequest, options: ChatCallOptions, warn: Warn): void {
  const config = body.output_config;
  if (!config) {
    return;
  }
  for (const [key, value] of Object.entries(config)) {
    if (key === 'effort' || !hasValue(value)) {
      continue;
    }
    // The contract leaves `format` open (`{type: "json_schema", schema}` is Anthropic's shape), so `schema` is
    // checked at run time.
    const format = config.format;
    if (key === 'format' && format && format.type === 'json_schema' && isRecord(format.schema)) {
      options.responseFormat = { type: 'json-schema', name: 'output', schema: format.schema };
      continue;
    }
    warn(`output_config.${key}`, `output_config.${key} is not supported; it was dropped`);
  }
}

export function decodeMessagesRequest(body: AnthropicMessagesRequest, warn: (warning: CallWarning) => void): DecodedMessagesRequest {
  const warnOnce = createWarnOnce(warn);
  const messages: ChatMessage[] = [];

  if (typeof body.system === 'string') {
    messages.push({ role: 'system', content: [{ type: 'text', text: body.system }] });
  } else if (Array.isArray(body.system) && body.system.length > 0) {
    const content = decodeSystemContent(body.system, warnOnce);
    if (content.length > 0) {
      messages.push({ role: 'system', content });
    }
  }

  for (const message of body.messages) {
    if (message.role === 'system') {
      const content = decodeSystemContent(message.content, warnOnce);
      if (content.length > 0) {
        messages.push({ role: 'system', content });
      }
    } else if (message.role === 'user') {
      messages.push(...decodeUserContent(message.content, warnOnce));
    } else {
      const assistant = decodeAssistantContent(message.content, warnOnce);
      if (assistant) {
        messages.push(assistant);
      }
    }
  }

  const options: ChatCallOptions = { messages };
  if (body.tools && body.tools.length > 0) {
    const tools = decodeTools(body.tools, warnOnce);
    if (tools.length > 0) {
      options.tools = tools;
    }
  }
  if (body.tool_choice) {
    Object.assign(options, decodeToolChoice(body.tool_choice));
  }
  if (typeof body.max_tokens === 'number') {
    options.maxOutputTokens = body.max_tokens;
  }
  if (typeof body.temperature === 'number') {
    options.temperature = body.temperature;
  }
  if (typeof body.top_p === 'number') {
    options.topP = body.top_p;
  }
  if (typeof body.top_k === 'number') {
    options.topK = body.top_k;
  }
  if (Array.isArray(body.stop_sequences) && body.stop_sequences.length > 0) {
    options.stopSequences = [...body.stop_sequences];
  }
  // Anthropic's user_id is meant for Anthropic (Claude Code puts device and session ids in it); it reaches an
  // Anthropic upstream through passthrough, but is not handed to another vendor as its `user`.
  const userId = body.metadata?.user_id;
  if (typeof userId === 'string' && userId !== '') {
    warnOnce('metadata.user_id', 'not forwarded to providers other than Anthropic');
  }
  const reasoning = decodeReasoning(body, warnOnce);
  if (reasoning) {
    options.reasoning = reasoning;
  }
  decodeOutputConfig(body, options, warnOnce);

  for (const [field, reason] of UNHONOURED_TOP_LEVEL) {
    if (hasValue(body[field])) {
      warnOnce(field, reason);
    }
  }
  noteCacheControl({ cache_control: body.cache_control }, warnOnce);

  return { model: body.model, stream: body.stream === true, options };
}
