/**
 * Anthropic Messages wire types: what callers send to `/anthropic/v1/messages`, what we answer, what we send the
 * Anthropic upstream and what it sends us. Snake_case, as on the wire.
 *
 * Our own endpoint's types are the generated contract types (`components['schemas'][…]` of `generated/api.d.ts`,
 * made from `openapi/api.yaml`), so the compiler rejects any field an encoder emits that the contract does not
 * declare and any required field it leaves out (a text block without `citations`, say). The upstream types are
 * hand-written after Anthropic's published API (`@anthropic-ai/sdk`'s `resources/messages`): the upstream is not
 * our contract and may send more than we read.
 */
import type { components } from '../../../generated/api.js';

type Schemas = components['schemas'];

// ---------------------------------------------------------------------------------------------------------
// Our API, request: `POST /anthropic/v1/messages` and `/count_tokens` (generated from the contract)

/** The body of `POST /anthropic/v1/messages`. */
export type AnthropicMessagesRequest = Schemas['AnthropicMessageCreateRequest'];
/** The body of `POST /anthropic/v1/messages/count_tokens`. */
export type AnthropicCountTokensRequest = Schemas['AnthropicCountTokensRequest'];
export type AnthropicMessageParam = Schemas['AnthropicMessageParam'];
export type AnthropicSystemParam = Schemas['AnthropicSystemParam'];
export type AnthropicCacheControl = Schemas['AnthropicCacheControl'];
/** Any block a caller may put in a message; the codec handles the named ones and warns about the rest. */
export type AnthropicContentBlockParam = Schemas['AnthropicContentBlockParam'];
export type AnthropicTextBlockParam = Schemas['AnthropicTextBlockParam'];
export type AnthropicImageBlockParam = Schemas['AnthropicImageBlockParam'];
export type AnthropicImageSource = Schemas['AnthropicImageSource'];
export type AnthropicDocumentBlockParam = Schemas['AnthropicDocumentBlockParam'];
export type AnthropicToolUseBlockParam = Schemas['AnthropicToolUseBlockParam'];
export type AnthropicToolResultBlockParam = Schemas['AnthropicToolResultBlockParam'];
export type AnthropicToolResultContentBlock = Schemas['AnthropicToolResultContentBlock'];
export type AnthropicThinkingBlockParam = Schemas['AnthropicThinkingBlockParam'];
export type AnthropicRedactedThinkingBlockParam = Schemas['AnthropicRedactedThinkingBlockParam'];
/** A client tool or a server tool, as a caller declares it. */
export type AnthropicToolUnion = Schemas['AnthropicToolUnion'];
export type AnthropicTool = Schemas['AnthropicTool'];
export type AnthropicServerTool = Schemas['AnthropicServerTool'];
export type AnthropicToolChoice = Schemas['AnthropicToolChoice'];
export type AnthropicThinkingConfig = Schemas['AnthropicThinkingConfig'];
export type AnthropicMetadata = Schemas['AnthropicMetadata'];
export type AnthropicOutputConfig = Schemas['AnthropicOutputConfig'];

// ---------------------------------------------------------------------------------------------------------
// Our API, answers (generated from the contract)

/** The `Message` object of a non-streamed answer (and of `message_start`). */
export type AnthropicMessage = Schemas['AnthropicMessage'];
/** A content block of an answer. */
export type AnthropicContentBlock = Schemas['AnthropicContentBlock'];
export type AnthropicTextBlock = Schemas['AnthropicTextBlock'];
export type AnthropicTextCitation = Schemas['AnthropicTextCitation'];
export type AnthropicThinkingBlock = Schemas['AnthropicThinkingBlock'];
export type AnthropicRedactedThinkingBlock = Schemas['AnthropicRedactedThinkingBlock'];
export type AnthropicToolUseBlock = Schemas['AnthropicToolUseBlock'];
export type AnthropicServerToolBlock = Schemas['AnthropicServerToolBlock'];
export type AnthropicStopReason = Schemas['AnthropicStopReason'];
export type AnthropicUsage = Schemas['AnthropicUsage'];
/** The body of `POST /anthropic/v1/messages/count_tokens`'s answer. */
export type AnthropicTokenCount = Schemas['AnthropicTokenCount'];

export type AnthropicContentBlockDelta = Schemas['AnthropicContentBlockDelta'];
export type AnthropicMessageDeltaUsage = Schemas['AnthropicMessageDeltaUsage'];
/** One streamed event's data; its `type` equals the SSE `event:` name. */
export type AnthropicStreamEventData = Schemas['AnthropicStreamEvent'];

/**
 * A wire event as the SSE layer frames it: `event: <name>` + `data: <json>`, where the name is the data's `type`
 * (one member per event type, so a mismatched pair does not compile).
 */
export type AnthropicStreamEvent = {
  [T in AnthropicStreamEventData['type']]: { event: T; data: Extract<AnthropicStreamEventData, { type: T }> };
}[AnthropicStreamEventData['type']];

// ---------------------------------------------------------------------------------------------------------
// What we send the Anthropic upstream (hand-written: Anthropic's API, not our contract)

export interface AnthropicUpstreamTextBlock {
  type: 'text';
  text: string;
}

export type AnthropicUpstreamImageSource =
  | { type: 'base64'; media_type: string; data: string }
  | { type: 'url'; url: string }
  | { type: 'file'; file_id: string };

export interface AnthropicUpstreamImageBlock {
  type: 'image';
  source: AnthropicUpstreamImageSource;
}

export interface AnthropicUpstreamToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | Array<AnthropicUpstreamTextBlock | AnthropicUpstreamImageBlock>;
  is_error?: boolean;
}

export type AnthropicUpstreamContentBlockParam =
  | AnthropicUpstreamTextBlock
  | AnthropicUpstreamImageBlock
  | AnthropicUpstreamToolResultBlock
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string };

export interface AnthropicUpstreamMessageParam {
  role: 'user' | 'assistant';
  content: string | AnthropicUpstreamContentBlockParam[];
}

export interface AnthropicUpstreamTool {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
}

export type AnthropicUpstreamToolChoice =
  | { type: 'auto'; disable_parallel_tool_use?: boolean }
  | { type: 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' };

export type AnthropicUpstreamThinkingConfig =
  | { type: 'enabled'; budget_tokens: number }
  | { type: 'adaptive' }
  | { type: 'disabled' };

/** The body we POST to the upstream's `/v1/messages` (and, cut down, to `/v1/messages/count_tokens`). */
export interface AnthropicUpstreamRequest {
  model: string;
  max_tokens: number;
  messages: AnthropicUpstreamMessageParam[];
  system?: string | AnthropicUpstreamTextBlock[];
  stream?: boolean;
  temperature?: number;
  top_p?: number;
  top_k?: number;
  stop_sequences?: string[];
  tools?: AnthropicUpstreamTool[];
  tool_choice?: AnthropicUpstreamToolChoice;
  thinking?: AnthropicUpstreamThinkingConfig;
  metadata?: { user_id?: string | null };
  output_config?: { effort?: string | null; format?: { type: 'json_schema'; schema: Record<string, unknown> } | null };
}

// ---------------------------------------------------------------------------------------------------------
// What the Anthropic upstream sends us (hand-written; nothing beyond what we read is assumed)

/** What the upstream may report as usage; every counter may be missing or null there. */
export interface AnthropicUpstreamUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  output_tokens_details?: { thinking_tokens?: number | null } | null;
  [key: string]: unknown;
}

/** A content block of an upstream answer; kinds we do not read (server tool blocks, …) stay open. */
export type AnthropicUpstreamContentBlock =
  | { type: 'text'; text: string; citations?: unknown[] | null }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: string; [key: string]: unknown };

/** The `Message` object as the upstream sends it (fields we do not read stay open). */
export interface AnthropicUpstreamMessage {
  id?: string;
  type?: string;
  model?: string;
  content?: AnthropicUpstreamContentBlock[];
  stop_reason?: string | null;
  stop_sequence?: string | null;
  usage?: AnthropicUpstreamUsage;
  [key: string]: unknown;
}

/** An upstream SSE event after JSON parsing; nothing about its shape is trusted yet. */
export interface AnthropicUpstreamStreamEvent {
  event?: string;
  data: unknown;
}
