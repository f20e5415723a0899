/**
 * Assembles the Responses `Response` object from the request echo, the output items and the outcome.
 *
 * One builder for the JSON answer, every lifecycle stream event and the stored copy, so a streamed
 * `response.completed` carries exactly what the non-streamed answer would have been.
 */
import type {
  FunctionToolEcho,
  OutputFunctionCall,
  OutputItem,
  ReasoningEcho,
  ResponseObject,
  ResponseStatus,
  ResponseUsage,
  TextConfigEcho,
  ToolChoiceEcho,
} from './wire-types.js';

/** Request fields the response object echoes back (already defaulted by the decoder). */
export interface ResponseEcho {
  instructions: string | null;
  metadata: Record<string, string>;
  previousResponseId: string | null;
  store: boolean;
  temperature: number | null;
  topP: number | null;
  maxOutputTokens: number | null;
  text: TextConfigEcho;
  toolChoice: ToolChoiceEcho;
  tools: FunctionToolEcho[];
  /**
   * Not echoed as a field: the name of the `namespace` tool each flattened function came from, keyed by the
   * function's name, so `function_call` items of those functions carry `namespace` (Codex routes calls by it).
   */
  toolNamespaces: ReadonlyMap<string, string>;
  parallelToolCalls: boolean;
  reasoning: ReasoningEcho;
}

export interface ResponseMeta extends ResponseEcho {
  /** The response id (`resp_…`), made by the route. */
  id: string;
  /** The model name shown to the caller. */
  model: string;
  /** Unix seconds. */
  createdAt: number;
  /** Makes output item ids; must return a unique id starting with `${prefix}_` (`msg_…`, `fc_…`, `rs_…`). */
  generateId: (prefix: 'msg' | 'fc' | 'rs') => string;
  /** Unix seconds now, for `completed_at`; defaults to the system clock. */
  now?: () => number;
}

/** `{ namespace }` when the called function came from a `namespace` tool, else nothing: spread into a `function_call` item. */
export function namespaceOf(
  meta: Pick<ResponseEcho, 'toolNamespaces'>,
  name: string,
): Pick<OutputFunctionCall, 'namespace'> {
  const namespace = meta.toolNamespaces.get(name);
  return namespace === undefined ? {} : { namespace };
}

export interface ResponseState {
  status: ResponseStatus;
  output: OutputItem[];
  usage: ResponseUsage | null;
  error?: ResponseObject['error'];
  incompleteDetails?: ResponseObject['incomplete_details'];
  completedAt?: number | null;
}

export function buildResponseObject(meta: ResponseMeta, state: ResponseState): ResponseObject {
  return {
    id: meta.id,
    object: 'response',
    created_at: meta.createdAt,
    completed_at: state.completedAt ?? null,
    status: state.status,
    error: state.error ?? null,
    incomplete_details: state.incompleteDetails ?? null,
    instructions: meta.instructions,
    max_output_tokens: meta.maxOutputTokens,
    metadata: meta.metadata,
    model: meta.model,
    output: state.output,
    output_text: outputText(state.output),
    parallel_tool_calls: meta.parallelToolCalls,
    previous_response_id: meta.previousResponseId,
    reasoning: meta.reasoning,
    store: meta.store,
    temperature: meta.temperature,
    text: meta.text,
    tool_choice: meta.toolChoice,
    tools: meta.tools,
    top_p: meta.topP,
    truncation: 'disabled',
    usage: state.usage,
  };
}

/** The SDK convenience `output_text`: the text of every message item, concatenated. */
function outputText(output: readonly OutputItem[]): string {
  let text = '';
  for (const item of output) {
    if (item.type === 'message') {
      for (const part of item.content) {
        if (part.type === 'output_text') {
          text += part.text;
        }
      }
    }
  }
  return text;
}

export function unixSecondsNow(): number {
  return Math.floor(Date.now() / 1000);
}
