/**
 * Canonical `ChatCallOptions` → an Anthropic `POST /v1/messages` body, for the Anthropic upstream provider.
 *
 * What the real API requires, and how it is met:
 * - No `role: "system"` in `messages`: every system message, wherever it stood, is hoisted into the top-level
 *   `system` blocks, in order.
 * - Strictly alternating roles: tool messages become user messages of `tool_result` blocks, and consecutive
 *   messages of one role are merged; inside a user message the `tool_result` blocks come first (the API
 *   rejects text before them).
 * - Thinking blocks only with their signature: reasoning parts are sent back as `thinking` when they carry a
 *   `signature`, as `redacted_thinking` when they carry `redactedData`, and dropped otherwise (reasoning from
 *   another provider cannot be verified by Anthropic).
 * - No empty text blocks; `input` of `tool_use` is an object (see `tool-input.ts`).
 * - `max_tokens` is required: 4096 when the caller gave none (plus the thinking budget, when thinking is on).
 *
 * Reasoning: `reasoning.budgetTokens` → `thinking: {type: "enabled", budget_tokens}`. A named effort becomes a
 * budget from `EFFORT_BUDGET_TOKENS` (manual thinking works on every thinking-capable Claude model, adaptive only
 * on the newest); `none` means no thinking; `reasoning: {}` or an unknown effort → `{type: "adaptive"}`.
 * With thinking on, the API refuses `temperature` ≠ 1, `top_k` and `top_p` < 0.95: those are dropped with a
 * warning rather than failing the call. It also refuses a replayed tool-calling assistant turn without its
 * signed thinking block (a turn that came from another provider): thinking is then turned off, with a warning.
 */
import type { ChatCallOptions, ChatMessage, ImagePart, TextPart, ToolResultPart } from '../../core/chat.js';
import type { CallWarning } from '../../core/call-context.js';
import { toolInputFromArguments } from './tool-input.js';
import type {
  AnthropicUpstreamContentBlockParam,
  AnthropicUpstreamImageBlock,
  AnthropicUpstreamRequest,
  AnthropicUpstreamTextBlock,
  AnthropicUpstreamThinkingConfig,
  AnthropicUpstreamTool,
  AnthropicUpstreamToolChoice,
  AnthropicUpstreamToolResultBlock,
} from './wire-types.js';

export const DEFAULT_MAX_TOKENS = 4096;

/** The smallest thinking budget Anthropic accepts. */
const MIN_THINKING_BUDGET = 1024;

/** Thinking budgets for OpenAI-style reasoning efforts. */
export const EFFORT_BUDGET_TOKENS: Record<string, number> = {
  minimal: 1024,
  low: 2048,
  medium: 4096,
  high: 8192,
  xhigh: 16_384,
  max: 32_768,
};

export interface EncodeMessagesRequestOptions {
  stream: boolean;
  /** Receives fields that cannot be sent to Anthropic; they are dropped. */
  warn?: (warning: CallWarning) => void;
}

type WireMessage = { role: 'user' | 'assistant'; content: AnthropicUpstreamContentBlockParam[] };

const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

function encodeImage(part: ImagePart, warn: (warning: CallWarning) => void): AnthropicUpstreamImageBlock | null {
  if (part.data !== undefined) {
    return { type: 'image', source: { type: 'base64', media_type: part.mediaType ?? 'image/png', data: part.data } };
  }
  if (part.url !== undefined) {
    const dataUrl = DATA_URL.exec(part.url);
    if (dataUrl) {
      // Both groups of DATA_URL are mandatory.
      return { type: 'image', source: { type: 'base64', media_type: dataUrl[1]!, data: dataUrl[2]! } };
    }
    if (/^https?:\/\//i.test(part.url)) {
      return { type: 'image', source: { type: 'url', url: part.url } };
    }
  }
  warn({
    field: 'image',
    reason:
      'only http(s) URLs, base64 data URLs and inline base64 images can be sent to Anthropic; the image was dropped',
  });
  return null;
}

function encodeUserParts(
  parts: Array<TextPart | ImagePart>,
  warn: (warning: CallWarning) => void,
): Array<AnthropicUpstreamTextBlock | AnthropicUpstreamImageBlock> {
  const blocks: Array<AnthropicUpstreamTextBlock | AnthropicUpstreamImageBlock> = [];
  for (const part of parts) {
    if (part.type === 'text') {
      if (part.text !== '') {
        blocks.push({ type: 'text', text: part.text });
      }
    } else {
      const image = encodeImage(part, warn);
      if (image) {
        blocks.push(image);
      }
    }
  }
  return blocks;
}

function encodeToolResult(
  part: ToolResultPart,
  warn: (warning: CallWarning) => void,
): AnthropicUpstreamToolResultBlock {
  const block: AnthropicUpstreamToolResultBlock = { type: 'tool_result', tool_use_id: part.toolCallId };
  const content = encodeUserParts(part.content, warn);
  const [first] = content;
  if (content.length === 1 && first?.type === 'text') {
    block.content = first.text;
  } else if (content.length > 0) {
    block.content = content;
  }
  if (part.isError) {
    block.is_error = true;
  }
  return block;
}

function encodeMessage(
  message: Exclude<ChatMessage, { role: 'system' }>,
  warn: (warning: CallWarning) => void,
): WireMessage {
  switch (message.role) {
    case 'user':
      return { role: 'user', content: encodeUserParts(message.content, warn) };
    case 'tool':
      return { role: 'user', content: message.content.map((part) => encodeToolResult(part, warn)) };
    case 'assistant': {
      const content: AnthropicUpstreamContentBlockParam[] = [];
      for (const part of message.content) {
        if (part.type === 'text') {
          if (part.text !== '') {
            content.push({ type: 'text', text: part.text });
          }
        } else if (part.type === 'reasoning') {
          if (part.redactedData !== undefined) {
            content.push({ type: 'redacted_thinking', data: part.redactedData });
          } else if (part.signature) {
            content.push({ type: 'thinking', thinking: part.text, signature: part.signature });
          }
        } else {
          content.push({
            type: 'tool_use',
            id: part.id,
            name: part.name,
            input: toolInputFromArguments(part.arguments),
          });
        }
      }
      return { role: 'assistant', content };
    }
  }
}

/** Merges same-role neighbours (after empty messages are gone) and puts `tool_result` blocks first. */
function mergeMessages(messages: WireMessage[]): WireMessage[] {
  const merged: WireMessage[] = [];
  for (const message of messages) {
    if (message.content.length === 0) {
      continue;
    }
    const last = merged.at(-1);
    if (last && last.role === message.role) {
      last.content.push(...message.content);
    } else {
      merged.push({ role: message.role, content: [...message.content] });
    }
  }
  for (const message of merged) {
    if (message.role === 'user') {
      const results = message.content.filter((block) => block.type === 'tool_result');
      if (results.length > 0 && results.length < message.content.length) {
        message.content = [...results, ...message.content.filter((block) => block.type !== 'tool_result')];
      }
    }
  }
  return merged;
}

/**
 * With thinking on, Anthropic refuses to continue a tool loop (the last message gives tool results) whose
 * assistant turn called the tool without its thinking block — a turn from another provider, or one whose
 * reasoning was not signed.
 */
function toolLoopLacksThinking(messages: WireMessage[]): boolean {
  const last = messages.at(-1);
  const assistant = messages.at(-2);
  if (!last || !assistant || last.role !== 'user' || assistant.role !== 'assistant') {
    return false;
  }
  if (
    !last.content.some((block) => block.type === 'tool_result') ||
    !assistant.content.some((block) => block.type === 'tool_use')
  ) {
    return false;
  }
  return !assistant.content.some((block) => block.type === 'thinking' || block.type === 'redacted_thinking');
}

function encodeToolChoice(options: ChatCallOptions): AnthropicUpstreamToolChoice | undefined {
  const disableParallel = options.parallelToolCalls === false ? { disable_parallel_tool_use: true } : {};
  switch (options.toolChoice?.type) {
    case undefined:
      return options.parallelToolCalls === false && options.tools?.length
        ? { type: 'auto', disable_parallel_tool_use: true }
        : undefined;
    case 'auto':
      return { type: 'auto', ...disableParallel };
    case 'required':
      return { type: 'any', ...disableParallel };
    case 'tool':
      return { type: 'tool', name: options.toolChoice.name, ...disableParallel };
    case 'none':
      return { type: 'none' };
  }
}

function encodeThinking(
  options: ChatCallOptions,
  warn: (warning: CallWarning) => void,
): { thinking?: AnthropicUpstreamThinkingConfig; maxTokens: number } {
  const reasoning = options.reasoning;
  const callerMax = options.maxOutputTokens;
  if (!reasoning) {
    return { maxTokens: callerMax ?? DEFAULT_MAX_TOKENS };
  }
  if (reasoning.budgetTokens !== undefined) {
    // The caller chose the budget: send it as given (the upstream explains a budget it refuses).
    return {
      thinking: { type: 'enabled', budget_tokens: reasoning.budgetTokens },
      maxTokens: callerMax ?? reasoning.budgetTokens + DEFAULT_MAX_TOKENS,
    };
  }
  const effort = reasoning.effort;
  if (effort === 'none') {
    return { maxTokens: callerMax ?? DEFAULT_MAX_TOKENS };
  }
  const budget = effort === undefined ? undefined : EFFORT_BUDGET_TOKENS[effort];
  if (budget === undefined) {
    return { thinking: { type: 'adaptive' }, maxTokens: callerMax ?? DEFAULT_MAX_TOKENS };
  }
  if (callerMax === undefined) {
    return { thinking: { type: 'enabled', budget_tokens: budget }, maxTokens: budget + DEFAULT_MAX_TOKENS };
  }
  // The caller's limit covers thinking and answer (as OpenAI's max_completion_tokens does): thinking gets at
  // most half of it.
  const fitted = Math.min(budget, Math.floor(callerMax / 2));
  if (fitted < MIN_THINKING_BUDGET) {
    warn({
      field: 'reasoning',
      reason: `max tokens ${callerMax} leave no room for Anthropic's minimum thinking budget of ${MIN_THINKING_BUDGET}; thinking is off`,
    });
    return { maxTokens: callerMax };
  }
  return { thinking: { type: 'enabled', budget_tokens: fitted }, maxTokens: callerMax };
}

function encodeTools(
  options: ChatCallOptions,
  warn: (warning: CallWarning) => void,
): AnthropicUpstreamTool[] | undefined {
  if (!options.tools || options.tools.length === 0) {
    return undefined;
  }
  return options.tools.map((tool) => {
    if (tool.strict === true) {
      // Strict tool use exists only on some Claude models and would fail the call on the others.
      warn({
        field: 'tools.strict',
        reason: 'strict tool schemas are not sent to Anthropic; the schema is still given to the model',
      });
    }
    const wire: AnthropicUpstreamTool = { name: tool.name, input_schema: tool.parameters };
    if (tool.description !== undefined) {
      wire.description = tool.description;
    }
    return wire;
  });
}

export function encodeMessagesRequest(
  options: ChatCallOptions,
  upstreamModel: string,
  encodeOptions: EncodeMessagesRequestOptions,
): AnthropicUpstreamRequest {
  const seen = new Set<string>();
  const warn = (warning: CallWarning) => {
    if (!seen.has(warning.field)) {
      seen.add(warning.field);
      encodeOptions.warn?.(warning);
    }
  };

  const system: AnthropicUpstreamTextBlock[] = [];
  const wireMessages: WireMessage[] = [];
  for (const message of options.messages) {
    if (message.role === 'system') {
      for (const part of message.content) {
        if (part.text !== '') {
          system.push({ type: 'text', text: part.text });
        }
      }
    } else {
      wireMessages.push(encodeMessage(message, warn));
    }
  }

  const messages = mergeMessages(wireMessages);
  let { thinking, maxTokens } = encodeThinking(options, warn);
  if (thinking && toolLoopLacksThinking(messages)) {
    warn({
      field: 'reasoning',
      reason:
        'the replayed assistant tool call has no signed thinking block, which Anthropic requires with thinking on; thinking is off for this call',
    });
    thinking = undefined;
    maxTokens = options.maxOutputTokens ?? DEFAULT_MAX_TOKENS;
  }
  const body: AnthropicUpstreamRequest = { model: upstreamModel, max_tokens: maxTokens, messages };
  if (system.length > 0) {
    body.system = system;
  }
  const tools = encodeTools(options, warn);
  if (tools) {
    body.tools = tools;
  }
  const toolChoice = encodeToolChoice(options);
  if (toolChoice) {
    body.tool_choice = toolChoice;
  }
  if (thinking) {
    body.thinking = thinking;
  }
  if (options.temperature !== undefined) {
    if (thinking && options.temperature !== 1) {
      warn({ field: 'temperature', reason: 'Anthropic allows only temperature 1 with thinking; it was dropped' });
    } else {
      body.temperature = options.temperature;
    }
  }
  if (options.topP !== undefined) {
    if (thinking && options.topP < 0.95) {
      warn({ field: 'top_p', reason: 'Anthropic allows only top_p from 0.95 with thinking; it was dropped' });
    } else {
      body.top_p = options.topP;
    }
  }
  if (options.topK !== undefined) {
    if (thinking) {
      warn({ field: 'top_k', reason: 'Anthropic does not allow top_k with thinking; it was dropped' });
    } else {
      body.top_k = options.topK;
    }
  }
  if (options.stopSequences && options.stopSequences.length > 0) {
    body.stop_sequences = [...options.stopSequences];
  }
  if (options.responseFormat?.type === 'json-schema') {
    body.output_config = { format: { type: 'json_schema', schema: options.responseFormat.schema } };
  } else if (options.responseFormat?.type === 'json') {
    warn({ field: 'response_format', reason: 'Anthropic has no plain JSON mode (only JSON schemas); it was dropped' });
  }
  if (options.seed !== undefined) {
    warn({ field: 'seed', reason: 'Anthropic does not support seeds; it was dropped' });
  }
  if (options.user !== undefined) {
    body.metadata = { user_id: options.user };
  }
  if (encodeOptions.stream) {
    body.stream = true;
  }
  return body;
}

/** The fields of a messages body that `POST /v1/messages/count_tokens` accepts (it refuses the others). */
const COUNT_TOKENS_FIELDS = [
  'model',
  'messages',
  'system',
  'tools',
  'tool_choice',
  'thinking',
  'output_config',
] as const;

export function encodeCountTokensRequest(
  options: ChatCallOptions,
  upstreamModel: string,
  warn?: (warning: CallWarning) => void,
): Record<string, unknown> {
  const body = encodeMessagesRequest(options, upstreamModel, { stream: false, warn });
  const countBody: Record<string, unknown> = {};
  for (const field of COUNT_TOKENS_FIELDS) {
    if (body[field] !== undefined) {
      countBody[field] = body[field];
    }
  }
  return countBody;
}
