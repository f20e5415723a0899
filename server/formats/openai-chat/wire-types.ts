/**
 * Wire types of the OpenAI chat-completions dialect, both for our own API (what callers send us and what we
 * answer) and for OpenAI-compatible upstreams (what we send them and what they answer).
 *
 * Our API's types are the generated contract types (`components['schemas'][…]` of `generated/api.d.ts`, made
 * from `openapi/api.yaml`), so the compiler rejects any field an encoder emits that the contract does not
 * declare, and any field the contract requires that an encoder leaves out. The upstream types are hand-written:
 * upstreams are not our contract, servers differ, and they may send (or take) more.
 */
import type { components } from '../../../generated/api.js';

type Schemas = components['schemas'];

// ---------------------------------------------------------------------------------------------------------
// Our API: `POST /v1/chat/completions` (generated from the contract)

/** The request body of `POST /v1/chat/completions`; the spec validator has checked it, the decoder stays defensive. */
export type ChatCompletionRequest = Schemas['ChatCompletionRequest'];
export type ChatRequestMessage = Schemas['ChatMessage'];
export type ChatSystemMessage = Schemas['ChatSystemMessage'];
export type ChatDeveloperMessage = Schemas['ChatDeveloperMessage'];
export type ChatUserMessage = Schemas['ChatUserMessage'];
export type ChatAssistantMessage = Schemas['ChatAssistantMessage'];
export type ChatToolMessage = Schemas['ChatToolMessage'];
/** Any content part a request message may hold (user parts, and the refusal parts of replayed assistant turns). */
export type ChatContentPart = Schemas['ChatUserContentPart'] | Schemas['ChatAssistantContentPart'];
export type ChatTextContentPart = Schemas['ChatContentPartText'];
export type ChatImageContentPart = Schemas['ChatContentPartImage'];
export type ChatRefusalContentPart = Schemas['ChatContentPartRefusal'];
export type ChatToolCallParam = Schemas['ChatToolCallParam'];
export type ChatTool = Schemas['ChatTool'];
/** The contract's only tool type; kept as a name of its own for the decoder. */
export type ChatFunctionTool = Schemas['ChatTool'];
export type ChatToolChoice = Schemas['ChatToolChoice'];
export type ChatResponseFormat = Schemas['ChatResponseFormat'];

/** The non-streamed answer of `POST /v1/chat/completions`. */
export type ChatCompletion = Schemas['ChatCompletion'];
export type ChatCompletionChoice = Schemas['ChatCompletionChoice'];
export type ChatCompletionMessage = Schemas['ChatCompletionMessage'];
/** A tool call of an answer (`message.tool_calls[]`). */
export type ChatMessageToolCall = Schemas['ChatToolCall'];
export type ChatCompletionUsage = Schemas['ChatCompletionUsage'];
export type ChatFinishReasonWire = Schemas['ChatCompletionFinishReason'];

/** One `data:` event of a streamed `POST /v1/chat/completions`. */
export type ChatCompletionChunk = Schemas['ChatCompletionChunk'];
export type ChatCompletionChunkChoice = Schemas['ChatCompletionChunkChoice'];
export type ChatCompletionChunkDelta = Schemas['ChatCompletionChunkDelta'];
export type ChatCompletionChunkToolCall = Schemas['ChatCompletionChunkToolCall'];
/** The last frame of a stream that failed after it started. */
export type ChatCompletionStreamError = Schemas['ChatCompletionStreamError'];
/** Any JSON `data:` frame of a stream (`[DONE]` is not JSON and not modelled). */
export type ChatCompletionStreamEvent = Schemas['ChatCompletionStreamEvent'];

// ---------------------------------------------------------------------------------------------------------
// What we send OpenAI-compatible upstreams (hand-written: not our contract; vLLM, llama.cpp and Ollama take
// fields OpenAI does not, such as `top_k`)

export interface UpstreamTextContentPart {
  type: 'text';
  text: string;
}

export interface UpstreamImageContentPart {
  type: 'image_url';
  image_url: { url: string; detail?: 'low' | 'high' | 'auto' };
}

export type UpstreamContentPart = UpstreamTextContentPart | UpstreamImageContentPart;

export interface UpstreamToolCallParam {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type UpstreamRequestMessage =
  | { role: 'system' | 'developer'; content: string | UpstreamTextContentPart[] }
  | { role: 'user'; content: string | UpstreamContentPart[] }
  | { role: 'assistant'; content: string | null; tool_calls?: UpstreamToolCallParam[] }
  | { role: 'tool'; tool_call_id: string; content: string | UpstreamTextContentPart[] };

export interface UpstreamFunctionTool {
  type: 'function';
  function: {
    name: string;
    description?: string;
    parameters?: Record<string, unknown>;
    strict?: boolean | null;
  };
}

export type UpstreamToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };

export type UpstreamResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | {
      type: 'json_schema';
      json_schema: { name: string; description?: string; schema?: Record<string, unknown>; strict?: boolean | null };
    };

/** The body we POST to an upstream's `/chat/completions`. */
export interface UpstreamChatRequest {
  model: string;
  messages: UpstreamRequestMessage[];
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean } | null;
  tools?: UpstreamFunctionTool[];
  tool_choice?: UpstreamToolChoice;
  parallel_tool_calls?: boolean;
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  /** Not OpenAI's; vLLM, llama.cpp and Ollama take it. */
  top_k?: number | null;
  stop?: string | string[] | null;
  seed?: number | null;
  user?: string;
  response_format?: UpstreamResponseFormat;
  reasoning_effort?: string | null;
}

/*
 * What OpenAI-compatible upstreams answer. Servers differ (vLLM, llama.cpp, Ollama, LM Studio, OpenRouter,
 * DeepSeek, OpenAI itself), so everything is optional and checked at run time.
 */

export interface UpstreamToolCall {
  index?: number;
  id?: string | null;
  type?: string;
  function?: { name?: string | null; arguments?: string | Record<string, unknown> | null };
}

export interface UpstreamUsage {
  prompt_tokens?: number | null;
  completion_tokens?: number | null;
  total_tokens?: number | null;
  prompt_tokens_details?: { cached_tokens?: number | null } | null;
  completion_tokens_details?: { reasoning_tokens?: number | null } | null;
  /** DeepSeek reports cache hits here instead of `prompt_tokens_details`. */
  prompt_cache_hit_tokens?: number | null;
}

export interface UpstreamMessage {
  role?: string;
  content?: string | Array<{ type?: string; text?: string }> | null;
  refusal?: string | null;
  reasoning_content?: string | null;
  reasoning?: string | null;
  tool_calls?: UpstreamToolCall[] | null;
}

export interface UpstreamChoice {
  index?: number;
  message?: UpstreamMessage;
  delta?: UpstreamMessage;
  finish_reason?: string | null;
  /** vLLM: the stop string (or token id) that ended generation. */
  stop_reason?: string | number | null;
}

export interface UpstreamErrorBody {
  message?: string;
  type?: string;
  code?: string | number | null;
}

/** An upstream `chat.completion` or `chat.completion.chunk` object. */
export interface UpstreamChatCompletion {
  id?: string;
  object?: string;
  model?: string;
  choices?: UpstreamChoice[];
  usage?: UpstreamUsage | null;
  /** Some servers (vLLM, OpenRouter) report a failure mid-stream as a chunk carrying `error`. */
  error?: UpstreamErrorBody | string;
}
