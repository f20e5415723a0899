/**
 * Wire types of the OpenAI Responses dialect (`POST /v1/responses`) as Omnigate accepts and emits it.
 *
 * They are the generated contract types (`components['schemas'][…]` of `generated/api.d.ts`, made from
 * `openapi/api.yaml`), under the local names the codec has always used, so the compiler rejects any field an
 * encoder emits that the contract does not declare and any required field it leaves out. This dialect has no
 * upstream side here (a Responses upstream is only ever passed through natively), so there are no hand-written
 * upstream types. Snake_case on purpose: this is the wire.
 */
import type { components } from '../../../generated/api.js';

type Schemas = components['schemas'];

// ---------------------------------------------------------------------------------------------------------
// Request

/** Text-bearing and media content parts of input messages and of `function_call_output.output`. */
export type InputContentPart = Schemas['ResponseInputContentPart'];

/** `EasyInputMessage` / `InputMessage` / a replayed `OutputMessage`; `type` may be absent (Vercel AI SDK). */
export type InputMessageItem = Schemas['ResponseInputMessage'];

export type FunctionCallItem = Schemas['ResponseInputFunctionCall'];

export type FunctionCallOutputItem = Schemas['ResponseInputFunctionCallOutput'];

export type ReasoningItem = Schemas['ResponseInputReasoning'];

/** A reference to an output item of an earlier stored response; `type` may be absent. */
export type ItemReferenceItem = Schemas['ResponseItemReference'];

export type InputItem = Schemas['ResponseInputItem'];

export type FunctionToolParam = Schemas['ResponseFunctionTool'];

/** Codex groups tools under a namespace (`multi_agent_v1`); we flatten its function tools and name it on their calls. */
export type NamespaceToolParam = Schemas['ResponseNamespaceTool'];

export type WebSearchToolParam = Schemas['ResponseWebSearchTool'];

/** Any tool the caller may send; only `function` and `namespace` are honoured, the rest is warned about. */
export type ToolParam = Schemas['ResponseTool'];

export type ToolChoiceParam = Schemas['ResponseToolChoice'];

export type TextFormatParam = Schemas['ResponseTextFormat'];

export type TextConfig = NonNullable<Schemas['ResponseTextParam']>;

export type ReasoningConfig = NonNullable<Schemas['ResponseReasoningParam']>;

/** `CreateResponse` body. */
export type ResponsesRequestBody = Schemas['ResponseCreateRequest'];

// ---------------------------------------------------------------------------------------------------------
// Response

export type ItemStatus = Schemas['ResponseOutputMessage']['status'];

export type OutputText = Schemas['ResponseOutputText'];

export type OutputRefusal = Schemas['ResponseOutputRefusal'];

export type OutputContent = Schemas['ResponseOutputContent'];

export type OutputMessage = Schemas['ResponseOutputMessage'];

export type OutputFunctionCall = Schemas['ResponseFunctionCall'];

export type SummaryText = Schemas['ResponseSummaryText'];

export type OutputReasoning = Schemas['ResponseReasoningItem'];

export type OutputItem = Schemas['ResponseOutputItem'];

export type ResponseUsage = Schemas['ResponseUsage'];

export type ResponseStatus = Schemas['ResponseObject']['status'];

/** The function tool as echoed back in the response object: every field present, as OpenAI echoes it. */
export type FunctionToolEcho = Required<Schemas['ResponseFunctionTool']>;

export type ToolChoiceEcho = Schemas['ResponseToolChoice'];

export type TextConfigEcho = Schemas['ResponseTextConfig'];

/** The reasoning options in effect; Omnigate always echoes the object (with null members), never `null`. */
export type ReasoningEcho = NonNullable<Schemas['ResponseReasoningConfig']>;

/** The `Response` object, as returned by `POST /v1/responses` and carried by lifecycle stream events. */
export type ResponseObject = Schemas['ResponseObject'];

// ---------------------------------------------------------------------------------------------------------
// Stream events (`ResponseStreamEvent`); every one carries `sequence_number`.

export type ResponseLifecycleEvent =
  | Schemas['ResponseCreatedEvent']
  | Schemas['ResponseInProgressEvent']
  | Schemas['ResponseCompletedEvent']
  | Schemas['ResponseFailedEvent']
  | Schemas['ResponseIncompleteEvent'];

export type OutputItemEvent = Schemas['ResponseOutputItemAddedEvent'] | Schemas['ResponseOutputItemDoneEvent'];

export type ContentPartEvent = Schemas['ResponseContentPartAddedEvent'] | Schemas['ResponseContentPartDoneEvent'];

export type OutputTextDeltaEvent = Schemas['ResponseOutputTextDeltaEvent'];

export type OutputTextDoneEvent = Schemas['ResponseOutputTextDoneEvent'];

export type FunctionCallArgumentsDeltaEvent = Schemas['ResponseFunctionCallArgumentsDeltaEvent'];

export type FunctionCallArgumentsDoneEvent = Schemas['ResponseFunctionCallArgumentsDoneEvent'];

export type ReasoningSummaryPartEvent =
  | Schemas['ResponseReasoningSummaryPartAddedEvent']
  | Schemas['ResponseReasoningSummaryPartDoneEvent'];

export type ReasoningSummaryTextDeltaEvent = Schemas['ResponseReasoningSummaryTextDeltaEvent'];

export type ReasoningSummaryTextDoneEvent = Schemas['ResponseReasoningSummaryTextDoneEvent'];

export type ErrorEvent = Schemas['ResponseErrorEvent'];

export type ResponseStreamEvent = Schemas['ResponseStreamEvent'];

/** One SSE event for `http/sse.ts`: `event:` is the event's `type`, `data` its JSON. */
export interface ResponsesWireEvent {
  event: ResponseStreamEvent['type'];
  data: ResponseStreamEvent;
}
