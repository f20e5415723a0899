/**
 * Wire types of the OpenAI chat-completions dialect, both for our own API (what callers send us and what we
 * answer) and for OpenAI-compatible upstreams (what we send them and what they answer).
 *
 * Our API's types mirror the `ChatCompletion…` schemas of `openapi/api.yaml` and are to be replaced by the
 * generated `components['schemas'][…]` types once `generated/api.d.ts` exists. Fields are snake_case, as on
 * the wire. Request types are deliberately loose (`unknown` where clients send varied shapes): the spec
 * validator has already checked the body, and the decoder stays defensive.
 */

export interface ChatTextContentPart {
  type: 'text';
  text: string;
}

export interface ChatImageContentPart {
  type: 'image_url';
  image_url: { url: string; detail?: 'low' | 'high' | 'auto' };
}

/** `refusal` parts appear in replayed assistant messages. */
export interface ChatRefusalContentPart {
  type: 'refusal';
  refusal: string;
}

/** Parts we cannot carry (`input_audio`, `file`) are typed loosely so the decoder can name them in its error. */
export interface ChatOtherContentPart {
  type: string;
  [key: string]: unknown;
}

export type ChatContentPart = ChatTextContentPart | ChatImageContentPart | ChatRefusalContentPart | ChatOtherContentPart;

export interface ChatMessageToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatSystemMessage {
  role: 'system' | 'developer';
  content: string | ChatContentPart[];
  name?: string;
}

export interface ChatUserMessage {
  role: 'user';
  content: string | ChatContentPart[];
  name?: string;
}

export interface ChatAssistantMessage {
  role: 'assistant';
  content?: string | ChatContentPart[] | null;
  refusal?: string | null;
  tool_calls?: ChatMessageToolCall[] | null;
  /** DeepSeek / vLLM name for the reasoning of an earlier turn; `reasoning` is Ollama's and OpenRouter's. */
  reasoning_content?: string | null;
  reasoning?: string | null;
  name?: string;
}

export interface ChatToolMessage {
  role: 'tool';
  tool_call_id: string;
  content: string | ChatContentPart[];
}

/** The deprecated `function` role; rejected by the decoder. */
export interface ChatFunctionMessage {
  role: 'function';
  name: string;
  content: string | null;
}

export type ChatRequestMessage = ChatSystemMessage | ChatUserMessage | ChatAssistantMessage | ChatToolMessage | ChatFunctionMessage;

export interface ChatFunctionTool {
  type: 'function';
  function: {
    name: string;
    description?: string;
    parameters?: Record<string, unknown>;
    strict?: boolean | null;
  };
}

export type ChatTool = ChatFunctionTool | { type: string; [key: string]: unknown };

export type ChatToolChoice =
  | 'none'
  | 'auto'
  | 'required'
  | { type: 'function'; function: { name: string } }
  | { type: 'allowed_tools'; allowed_tools: { mode: 'auto' | 'required'; tools: unknown[] } }
  | { type: string; [key: string]: unknown };

export type ChatResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; json_schema: { name: string; description?: string; schema?: Record<string, unknown>; strict?: boolean | null } };

/** The request body of `POST /v1/chat/completions` (and what we send an upstream). */
export interface ChatCompletionRequest {
  model: string;
  messages: ChatRequestMessage[];
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean; include_obfuscation?: boolean } | null;
  tools?: ChatTool[];
  tool_choice?: ChatToolChoice;
  parallel_tool_calls?: boolean;
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  /** Not OpenAI's; vLLM, llama.cpp and Ollama take it. */
  top_k?: number | null;
  n?: number | null;
  stop?: string | string[] | null;
  seed?: number | null;
  user?: string;
  response_format?: ChatResponseFormat;
  reasoning_effort?: string | null;
  [field: string]: unknown;
}

export interface ChatCompletionUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number; audio_tokens?: number } | null;
  completion_tokens_details?: { reasoning_tokens?: number; audio_tokens?: number; accepted_prediction_tokens?: number; rejected_prediction_tokens?: number } | null;
}

export type ChatFinishReasonWire = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call';

export interface ChatCompletionMessage {
  role: 'assistant';
  content: string | null;
  refusal: string | null;
  tool_calls?: ChatMessageToolCall[];
  /** Omnigate carries model reasoning here, as DeepSeek and vLLM do. */
  reasoning_content?: string;
}

/** The non-streamed answer of `POST /v1/chat/completions`. */
export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: Array<{ index: number; message: ChatCompletionMessage; finish_reason: ChatFinishReasonWire; logprobs: null }>;
  usage: ChatCompletionUsage;
  system_fingerprint: null;
}

export interface ChatCompletionChunkToolCall {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

export interface ChatCompletionChunkDelta {
  role?: 'assistant';
  content?: string | null;
  reasoning_content?: string;
  tool_calls?: ChatCompletionChunkToolCall[];
}

/** One `data:` event of a streamed `POST /v1/chat/completions`. */
export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  system_fingerprint: null;
  choices: Array<{ index: number; delta: ChatCompletionChunkDelta; finish_reason: ChatFinishReasonWire | null; logprobs: null }>;
  /** Present (null, then the totals on the last chunk) only when the caller asked for `include_usage`. */
  usage?: ChatCompletionUsage | null;
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
