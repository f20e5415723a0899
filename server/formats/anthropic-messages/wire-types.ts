/**
 * Anthropic Messages wire types: what callers send to `/anthropic/v1/messages`, what we answer, and what the
 * Anthropic upstream sends us. They mirror Anthropic's published API (as described in
 * `openapi/fragments/*.yaml` for our own endpoint, and `@anthropic-ai/sdk`'s `resources/messages` for the
 * upstream) and keep its snake_case. Only the fields the codec reads or writes are typed; everything else stays
 * open. The lead will switch the request and response types of our API to `generated/api.d.ts` once it exists.
 */

export interface AnthropicCacheControl {
  type: string;
  ttl?: string;
}

export interface AnthropicTextBlock {
  type: 'text';
  text: string;
  cache_control?: AnthropicCacheControl | null;
  citations?: unknown[] | null;
}

export type AnthropicImageSource =
  | { type: 'base64'; media_type: string; data: string }
  | { type: 'url'; url: string }
  | { type: 'file'; file_id: string };

export interface AnthropicImageBlock {
  type: 'image';
  source: AnthropicImageSource;
  cache_control?: AnthropicCacheControl | null;
}

export interface AnthropicDocumentBlock {
  type: 'document';
  source:
    | { type: 'text'; media_type?: string; data: string }
    | { type: 'content'; content: string | Array<AnthropicTextBlock | AnthropicImageBlock> }
    | { type: string; [key: string]: unknown };
  title?: string | null;
  context?: string | null;
  citations?: unknown;
  cache_control?: AnthropicCacheControl | null;
}

export interface AnthropicToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
  cache_control?: AnthropicCacheControl | null;
}

export interface AnthropicToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | Array<AnthropicTextBlock | AnthropicImageBlock | { type: string; [key: string]: unknown }>;
  is_error?: boolean;
  cache_control?: AnthropicCacheControl | null;
}

export interface AnthropicThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

export interface AnthropicRedactedThinkingBlock {
  type: 'redacted_thinking';
  data: string;
}

/** Any block a caller may put in a message; the codec handles the named ones and warns about the rest. */
export type AnthropicContentBlockParam =
  | AnthropicTextBlock
  | AnthropicImageBlock
  | AnthropicDocumentBlock
  | AnthropicToolUseBlock
  | AnthropicToolResultBlock
  | AnthropicThinkingBlock
  | AnthropicRedactedThinkingBlock
  | { type: string; [key: string]: unknown };

export interface AnthropicMessageParam {
  /** `system` is not in older Messages schemas; Claude Code sends it mid-conversation. */
  role: 'user' | 'assistant' | 'system';
  content: string | AnthropicContentBlockParam[];
}

export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
  /** Absent or `custom` for a client tool; anything else is a server tool (`web_search_20250305`, …). */
  type?: string;
  strict?: boolean | null;
  cache_control?: AnthropicCacheControl | null;
  eager_input_streaming?: boolean | null;
  defer_loading?: boolean | null;
  [key: string]: unknown;
}

export type AnthropicToolChoice =
  | { type: 'auto'; disable_parallel_tool_use?: boolean }
  | { type: 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' };

export type AnthropicThinkingConfig =
  | { type: 'enabled'; budget_tokens: number; display?: string | null }
  | { type: 'adaptive'; display?: string | null }
  | { type: 'disabled' }
  | { type: string; [key: string]: unknown };

export interface AnthropicOutputConfig {
  effort?: string | null;
  format?: { type: 'json_schema'; schema: Record<string, unknown> } | null;
  [key: string]: unknown;
}

/** The body of `POST /v1/messages` (ours and the upstream's). */
export interface AnthropicMessagesRequest {
  model: string;
  max_tokens?: number;
  messages: AnthropicMessageParam[];
  system?: string | AnthropicTextBlock[];
  stream?: boolean;
  temperature?: number;
  top_p?: number;
  top_k?: number;
  stop_sequences?: string[];
  tools?: AnthropicTool[];
  tool_choice?: AnthropicToolChoice;
  thinking?: AnthropicThinkingConfig;
  metadata?: { user_id?: string | null; [key: string]: unknown };
  output_config?: AnthropicOutputConfig;
  [key: string]: unknown;
}

/** A content block of an answer. */
export type AnthropicContentBlock =
  | { type: 'text'; text: string; citations?: unknown[] | null }
  | AnthropicThinkingBlock
  | AnthropicRedactedThinkingBlock
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: string; [key: string]: unknown };

export type AnthropicStopReason =
  | 'end_turn'
  | 'max_tokens'
  | 'stop_sequence'
  | 'tool_use'
  | 'pause_turn'
  | 'refusal'
  | 'model_context_window_exceeded';

export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number | null;
  cache_read_input_tokens: number | null;
}

/** What the upstream may report as usage; every counter may be missing or null there. */
export interface AnthropicUpstreamUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  output_tokens_details?: { thinking_tokens?: number | null } | null;
  [key: string]: unknown;
}

/** The `Message` object of a non-streamed answer. */
export interface AnthropicMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: AnthropicContentBlock[];
  stop_reason: AnthropicStopReason | null;
  stop_sequence: string | null;
  usage: AnthropicUsage;
}

/** The same object as the upstream sends it (fields we do not read stay open). */
export interface AnthropicUpstreamMessage {
  id?: string;
  type?: string;
  model?: string;
  content?: AnthropicContentBlock[];
  stop_reason?: string | null;
  stop_sequence?: string | null;
  usage?: AnthropicUpstreamUsage;
  [key: string]: unknown;
}

export type AnthropicContentBlockDelta =
  | { type: 'text_delta'; text: string }
  | { type: 'input_json_delta'; partial_json: string }
  | { type: 'thinking_delta'; thinking: string }
  | { type: 'signature_delta'; signature: string }
  | { type: 'citations_delta'; citation: unknown };

/** One streamed event's data; its `type` equals the SSE `event:` name. */
export type AnthropicStreamEventData =
  | { type: 'message_start'; message: AnthropicMessage }
  | { type: 'content_block_start'; index: number; content_block: AnthropicContentBlock }
  | { type: 'content_block_delta'; index: number; delta: AnthropicContentBlockDelta }
  | { type: 'content_block_stop'; index: number }
  | {
      type: 'message_delta';
      delta: { stop_reason: AnthropicStopReason | null; stop_sequence: string | null };
      usage: {
        output_tokens: number;
        input_tokens: number | null;
        cache_creation_input_tokens: number | null;
        cache_read_input_tokens: number | null;
      };
    }
  | { type: 'message_stop' }
  | { type: 'ping' }
  | { type: 'error'; error: { type: string; message: string } };

/** A wire event as the SSE layer frames it: `event: <name>` + `data: <json>`. */
export interface AnthropicStreamEvent {
  event: AnthropicStreamEventData['type'];
  data: AnthropicStreamEventData;
}

/** An upstream SSE event after JSON parsing; nothing about its shape is trusted yet. */
export interface AnthropicUpstreamStreamEvent {
  event?: string;
  data: unknown;
}

/** The body of `POST /v1/messages/count_tokens`'s answer. */
export interface AnthropicTokenCount {
  input_tokens: number;
}
