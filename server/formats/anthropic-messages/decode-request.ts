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
import type { ChatCallOptions, ChatMessage } from '../../core/chat.js';
import type { CallWarning } from '../../core/call-context.js';
import { decodeAssistantContent, decodeSystemContent, decodeUserContent } from './decode-content-blocks.js';
import { decodeOutputConfig, decodeReasoning } from './decode-reasoning.js';
import { decodeToolChoice, decodeTools } from './decode-tools.js';
import { createWarnOnce, hasValue, noteCacheControl } from './decode-warnings.js';
import type { AnthropicMessagesRequest } from './wire-types.js';

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

export function decodeMessagesRequest(
  body: AnthropicMessagesRequest,
  warn: (warning: CallWarning) => void,
): DecodedMessagesRequest {
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
