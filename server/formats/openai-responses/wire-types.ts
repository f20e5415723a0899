/**
 * Wire types of the OpenAI Responses dialect (`POST /v1/responses`) as Omnigate accepts and emits it.
 *
 * These mirror the Responses schemas of our OpenAPI contract (`openapi/fragments/*.yaml`, after OpenAI's
 * `CreateResponse`, `Response` and `ResponseStreamEvent`) and only describe the subset this codec reads or
 * writes. They will be replaced by `components['schemas'][…]` from `generated/api.d.ts` once it exists.
 * Snake_case on purpose: this is the wire.
 */

// ---------------------------------------------------------------------------------------------------------
// Request

/** Text-bearing and media content parts of input messages and of `function_call_output.output`. */
export type InputContentPart =
  | { type: 'input_text'; text: string }
  | { type: 'input_image'; image_url?: string | null; file_id?: string | null; detail?: string | null }
  | { type: 'input_file'; file_id?: string | null; file_data?: string | null; file_url?: string | null; filename?: string | null }
  | { type: 'output_text'; text: string; annotations?: unknown[]; logprobs?: unknown[] }
  | { type: 'refusal'; refusal: string };

/** `EasyInputMessage` / `InputMessage` / a replayed `OutputMessage`; `type` may be absent (Vercel AI SDK). */
export interface InputMessageItem {
  type?: 'message';
  role: 'user' | 'assistant' | 'system' | 'developer';
  content: string | InputContentPart[];
  /** Client-made (`msg_<uuid>`) or an id we issued; ignored. */
  id?: string | null;
  status?: string | null;
}

export interface FunctionCallItem {
  type: 'function_call';
  call_id: string;
  name: string;
  arguments: string;
  id?: string | null;
  status?: string | null;
  namespace?: string | null;
}

export interface FunctionCallOutputItem {
  type: 'function_call_output';
  call_id: string;
  output: string | InputContentPart[];
  /** Client-made (`fco_<uuid>`); ignored. */
  id?: string | null;
  status?: string | null;
}

export interface ReasoningItem {
  type: 'reasoning';
  id?: string | null;
  summary?: Array<{ type: 'summary_text'; text: string }>;
  content?: Array<{ type: 'reasoning_text'; text: string }> | null;
  encrypted_content?: string | null;
  status?: string | null;
}

/** A reference to an output item of an earlier stored response; `type` may be absent. */
export interface ItemReferenceItem {
  type?: 'item_reference' | null;
  id: string;
}

export type InputItem = InputMessageItem | FunctionCallItem | FunctionCallOutputItem | ReasoningItem | ItemReferenceItem;

export interface FunctionToolParam {
  type: 'function';
  name: string;
  description?: string | null;
  parameters?: Record<string, unknown> | null;
  strict?: boolean | null;
}

/** Codex groups tools under a namespace (`multi_agent_v1`); we flatten its function tools. */
export interface NamespaceToolParam {
  type: 'namespace';
  name: string;
  description?: string;
  tools: Array<FunctionToolParam | { type: string; name?: string; [key: string]: unknown }>;
}

/** Any tool the caller may send; only `function` and `namespace` are honoured, the rest is warned about. */
export type ToolParam = FunctionToolParam | NamespaceToolParam | { type: string; [key: string]: unknown };

export type ToolChoiceParam =
  | 'none'
  | 'auto'
  | 'required'
  | { type: 'function'; name: string }
  | { type: 'allowed_tools'; mode: 'auto' | 'required'; tools: unknown[] }
  | { type: string; [key: string]: unknown };

export type TextFormatParam =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; description?: string | null; strict?: boolean | null };

export interface TextConfig {
  format?: TextFormatParam | null;
  verbosity?: string | null;
}

export interface ReasoningConfig {
  effort?: string | null;
  summary?: string | null;
  generate_summary?: string | null;
}

/** `CreateResponse` body. */
export interface ResponsesRequestBody {
  model: string;
  input?: string | InputItem[] | null;
  instructions?: string | null;
  tools?: ToolParam[] | null;
  tool_choice?: ToolChoiceParam | null;
  parallel_tool_calls?: boolean | null;
  max_output_tokens?: number | null;
  max_tool_calls?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  top_logprobs?: number | null;
  reasoning?: ReasoningConfig | null;
  text?: TextConfig | null;
  stream?: boolean | null;
  stream_options?: Record<string, unknown> | null;
  store?: boolean | null;
  background?: boolean | null;
  previous_response_id?: string | null;
  conversation?: unknown;
  include?: string[] | null;
  truncation?: string | null;
  metadata?: Record<string, string> | null;
  prompt?: unknown;
  service_tier?: string | null;
  safety_identifier?: string | null;
  prompt_cache_key?: string | null;
  prompt_cache_retention?: string | null;
  client_metadata?: unknown;
  context_management?: unknown;
  user?: string | null;
}

// ---------------------------------------------------------------------------------------------------------
// Response

export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

export interface OutputText {
  type: 'output_text';
  text: string;
  annotations: unknown[];
  logprobs: unknown[];
}

export interface OutputMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  status: ItemStatus;
  content: OutputText[];
}

export interface OutputFunctionCall {
  id: string;
  type: 'function_call';
  call_id: string;
  name: string;
  arguments: string;
  status: ItemStatus;
}

export interface SummaryText {
  type: 'summary_text';
  text: string;
}

export interface OutputReasoning {
  id: string;
  type: 'reasoning';
  summary: SummaryText[];
  /** Present only when there is opaque reasoning state to replay. */
  encrypted_content?: string;
}

export type OutputItem = OutputMessage | OutputFunctionCall | OutputReasoning;

export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

/** The function tool as echoed back in the response object. */
export interface FunctionToolEcho {
  type: 'function';
  name: string;
  description: string | null;
  parameters: Record<string, unknown>;
  strict: boolean | null;
}

export type ToolChoiceEcho = 'none' | 'auto' | 'required' | { type: 'function'; name: string };

export interface TextConfigEcho {
  format: TextFormatParam;
  verbosity?: string;
}

export interface ReasoningEcho {
  effort: string | null;
  summary: string | null;
}

/** The `Response` object, as returned by `POST /v1/responses` and carried by lifecycle stream events. */
export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  completed_at: number | null;
  status: ResponseStatus;
  error: { code: string; message: string } | null;
  incomplete_details: { reason: 'max_output_tokens' | 'content_filter' } | null;
  instructions: string | null;
  max_output_tokens: number | null;
  metadata: Record<string, string>;
  model: string;
  output: OutputItem[];
  output_text: string;
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  reasoning: ReasoningEcho;
  store: boolean;
  temperature: number | null;
  text: TextConfigEcho;
  tool_choice: ToolChoiceEcho;
  tools: FunctionToolEcho[];
  top_p: number | null;
  truncation: 'disabled';
  usage: ResponseUsage | null;
}

// ---------------------------------------------------------------------------------------------------------
// Stream events (`ResponseStreamEvent`); every one carries `sequence_number`.

interface Sequenced {
  sequence_number: number;
}

export type ResponseLifecycleEvent = Sequenced & {
  type: 'response.created' | 'response.in_progress' | 'response.completed' | 'response.incomplete' | 'response.failed';
  response: ResponseObject;
};

export type OutputItemEvent = Sequenced & {
  type: 'response.output_item.added' | 'response.output_item.done';
  output_index: number;
  item: OutputItem;
};

export type ContentPartEvent = Sequenced & {
  type: 'response.content_part.added' | 'response.content_part.done';
  item_id: string;
  output_index: number;
  content_index: number;
  part: OutputText;
};

export type OutputTextDeltaEvent = Sequenced & {
  type: 'response.output_text.delta';
  item_id: string;
  output_index: number;
  content_index: number;
  delta: string;
  logprobs: unknown[];
};

export type OutputTextDoneEvent = Sequenced & {
  type: 'response.output_text.done';
  item_id: string;
  output_index: number;
  content_index: number;
  text: string;
  logprobs: unknown[];
};

export type FunctionCallArgumentsDeltaEvent = Sequenced & {
  type: 'response.function_call_arguments.delta';
  item_id: string;
  output_index: number;
  delta: string;
};

export type FunctionCallArgumentsDoneEvent = Sequenced & {
  type: 'response.function_call_arguments.done';
  item_id: string;
  output_index: number;
  name: string;
  arguments: string;
};

export type ReasoningSummaryPartEvent = Sequenced & {
  type: 'response.reasoning_summary_part.added' | 'response.reasoning_summary_part.done';
  item_id: string;
  output_index: number;
  summary_index: number;
  part: SummaryText;
};

export type ReasoningSummaryTextDeltaEvent = Sequenced & {
  type: 'response.reasoning_summary_text.delta';
  item_id: string;
  output_index: number;
  summary_index: number;
  delta: string;
};

export type ReasoningSummaryTextDoneEvent = Sequenced & {
  type: 'response.reasoning_summary_text.done';
  item_id: string;
  output_index: number;
  summary_index: number;
  text: string;
};

export type ErrorEvent = Sequenced & {
  type: 'error';
  code: string | null;
  message: string;
  param: string | null;
};

export type ResponseStreamEvent =
  | ResponseLifecycleEvent
  | OutputItemEvent
  | ContentPartEvent
  | OutputTextDeltaEvent
  | OutputTextDoneEvent
  | FunctionCallArgumentsDeltaEvent
  | FunctionCallArgumentsDoneEvent
  | ReasoningSummaryPartEvent
  | ReasoningSummaryTextDeltaEvent
  | ReasoningSummaryTextDoneEvent
  | ErrorEvent;

/** One SSE event for `http/sse.ts`: `event:` is the event's `type`, `data` its JSON. */
export interface ResponsesWireEvent {
  event: ResponseStreamEvent['type'];
  data: ResponseStreamEvent;
}
