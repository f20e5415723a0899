/**
 * The canonical core: the one internal shape every text dialect is decoded into and every provider speaks.
 *
 * Codecs in `server/formats/*` translate wire requests of one dialect (OpenAI chat, OpenAI Responses,
 * Anthropic Messages) into `ChatCallOptions`, and canonical `ChatStreamPart`s back into that dialect's
 * wire events. Providers in `server/providers/*` implement `ChatModel` against an engine or an upstream.
 * No dialect is ever translated into another directly; everything goes through these types.
 *
 * This file knows nothing about HTTP, Express, SSE framing or storage. Change it reluctantly.
 */
import type { CallContext } from './call-context.js';

/** The three wire dialects Omnigate speaks; also what an upstream may speak natively. */
export type Dialect = 'openai-chat' | 'openai-responses' | 'anthropic-messages';

/** Plain text in a message. */
export interface TextPart {
  type: 'text';
  text: string;
}

/** An image given by URL (http(s) or data: URL) or inline base64 bytes. */
export interface ImagePart {
  type: 'image';
  /** An http(s) URL or a `data:` URL. Set when the caller gave a URL. */
  url?: string;
  /** Base64 bytes and their media type. Set when the caller gave inline data. */
  data?: string;
  mediaType?: string;
  /** OpenAI's `detail` hint, carried where the target dialect has one. */
  detail?: 'low' | 'high' | 'auto';
}

/**
 * Model reasoning ("thinking"). Carried across dialects as text; the opaque fields let the same
 * dialect replay it to the upstream that produced it (Anthropic signatures, Responses encrypted content).
 */
export interface ReasoningPart {
  type: 'reasoning';
  text: string;
  /** Anthropic `thinking.signature`. */
  signature?: string;
  /** Anthropic `redacted_thinking.data`: opaque, no text. */
  redactedData?: string;
  /** Responses `reasoning.encrypted_content`. */
  encryptedContent?: string;
  /** Responses reasoning item id, kept so the item can be replayed. */
  itemId?: string;
}

/** A call of a function tool made by the assistant. `arguments` is the JSON text exactly as produced. */
export interface ToolCallPart {
  type: 'tool-call';
  id: string;
  name: string;
  arguments: string;
  /** Responses function_call item id (`fc_…`), kept so the item can be replayed. */
  itemId?: string;
}

/** The result of a tool call, given back by the caller. */
export interface ToolResultPart {
  type: 'tool-result';
  toolCallId: string;
  /** Text and images the tool returned. */
  content: Array<TextPart | ImagePart>;
  isError?: boolean;
}

export type SystemMessage = { role: 'system'; content: TextPart[] };
export type UserMessage = { role: 'user'; content: Array<TextPart | ImagePart> };
export type AssistantMessage = { role: 'assistant'; content: Array<TextPart | ReasoningPart | ToolCallPart> };
export type ToolMessage = { role: 'tool'; content: ToolResultPart[] };

/**
 * A conversation turn. System messages may appear anywhere (Claude Code sends them mid-conversation);
 * providers whose upstream only takes a leading system prompt hoist them.
 */
export type ChatMessage = SystemMessage | UserMessage | AssistantMessage | ToolMessage;

/** A function tool. `parameters` is the caller's JSON Schema, passed through untouched (any draft). */
export interface ToolDefinition {
  name: string;
  description?: string;
  parameters: Record<string, unknown>;
  strict?: boolean;
}

export type ToolChoice = { type: 'auto' } | { type: 'none' } | { type: 'required' } | { type: 'tool'; name: string };

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json' }
  | { type: 'json-schema'; name: string; schema: Record<string, unknown>; description?: string; strict?: boolean };

/** Everything a provider needs for one chat call, already validated by the spec and decoded by a codec. */
export interface ChatCallOptions {
  messages: ChatMessage[];
  tools?: ToolDefinition[];
  toolChoice?: ToolChoice;
  parallelToolCalls?: boolean;
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stopSequences?: string[];
  seed?: number;
  responseFormat?: ResponseFormat;
  /** Reasoning requested by the caller; providers that cannot honour it add a warning. */
  reasoning?: { effort?: string; budgetTokens?: number };
  /** Opaque end-user id, forwarded where the upstream has a field for it. */
  user?: string;
}

/** Why generation stopped, in canonical terms; each codec maps it to its dialect's names. */
export type FinishReason = 'stop' | 'length' | 'tool-calls' | 'content-filter' | 'error' | 'other';

/**
 * Token usage. Optional counters are absent when the provider did not report them.
 * Totals follow OpenAI's convention in every codec: `inputTokens` is the whole input, cache reads and writes
 * included (Anthropic reports them beside `input_tokens`, so its codec adds them in and takes them out again),
 * and `outputTokens` includes `reasoningTokens`.
 */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  /** Input tokens read from a prompt cache (OpenAI cached_tokens, Anthropic cache_read_input_tokens). */
  cacheReadTokens?: number;
  /** Input tokens written to a prompt cache (Anthropic cache_creation_input_tokens). */
  cacheWriteTokens?: number;
  /** Output tokens spent on reasoning. */
  reasoningTokens?: number;
}

/**
 * One event of a canonical stream. Order: text, reasoning and tool-call parts interleave as produced;
 * exactly one `finish` ends a successful stream. Failures are thrown from the iterator, never yielded.
 * A tool call is announced by `tool-call-start`, continued by `tool-call-delta`s (argument fragments,
 * concatenated in order) and closed by `tool-call-end`; `index` numbers calls within the response.
 */
export type ChatStreamPart =
  | { type: 'text-delta'; text: string }
  | { type: 'reasoning-delta'; text: string }
  | { type: 'reasoning-end'; signature?: string; redactedData?: string; encryptedContent?: string }
  | { type: 'tool-call-start'; index: number; id: string; name: string }
  | { type: 'tool-call-delta'; index: number; argumentsDelta: string }
  | { type: 'tool-call-end'; index: number }
  | { type: 'finish'; finishReason: FinishReason; stopSequence?: string; usage: Usage };

/** A whole (non-streamed) answer. */
export interface ChatResult {
  content: Array<TextPart | ReasoningPart | ToolCallPart>;
  finishReason: FinishReason;
  stopSequence?: string;
  usage: Usage;
}

/**
 * A chat model. `generate` answers once; `stream` yields canonical parts. Both throw `ApiError`/`UpstreamError`
 * (from `server/http/api-error.ts`) on failure; `stream` throws before its first part when the upstream
 * rejects the call, so the route can still answer with a plain HTTP error.
 */
export interface ChatModel {
  /** The provider id from config, e.g. `local` or `openai`. */
  readonly provider: string;
  /** The model id as the provider knows it (the upstream's own name). */
  readonly modelId: string;
  generate(options: ChatCallOptions, context: CallContext): Promise<ChatResult>;
  stream(options: ChatCallOptions, context: CallContext): AsyncIterable<ChatStreamPart>;
  /**
   * Counts input tokens of a call as this model would (exactly, if the upstream can count; else an estimate).
   */
  countTokens(options: ChatCallOptions, context: CallContext): Promise<number>;
  /**
   * Native passthrough: when the caller speaks a dialect the upstream speaks too, the wire body goes through
   * untouched (only `model` is rewritten). Absent when the provider has no upstream of that dialect.
   */
  passthrough?: Partial<Record<Dialect, NativePassthrough>>;
  /**
   * Present on a model that writes a cited answer from numbered sources itself, with no prompt (the built-in
   * extractive writer): `POST /v1/search/answer` asks this capability rather than the provider's id.
   */
  writeFromSources?(query: string, sources: Array<{ text: string }>): SourcedAnswer;
}

/** An answer written from sources: each sentence carries its `[n]` marker; `order[i]` is the source of `[i + 1]`. */
export interface SourcedAnswer {
  answer: string;
  /** The sentences as sent, in order (each with its marker), for streaming. */
  sentences: string[];
  order: number[];
}

/** The raw upstream answer of a native passthrough call. */
export interface PassthroughResponse {
  status: number;
  headers: Record<string, string>;
  /** The upstream body as bytes (JSON or SSE), streamed. */
  body: AsyncIterable<Uint8Array>;
}

export type PassthroughContext = CallContext & { query?: string; headers?: Record<string, string> };

export interface NativePassthrough {
  /** Sends `body` (the caller's wire body with `model` already rewritten) to the upstream's endpoint. */
  forward(body: Record<string, unknown>, context: PassthroughContext): Promise<PassthroughResponse>;
  /** The dialect's token-counting endpoint, where the upstream has one (Anthropic's count_tokens). */
  forwardCountTokens?(body: Record<string, unknown>, context: PassthroughContext): Promise<PassthroughResponse>;
}
