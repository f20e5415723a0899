/**
 * `POST /v1/responses` body → canonical `ChatCallOptions`, for any provider.
 *
 * The route loads the canonical conversation of `previous_response_id` (the `history`) and resolves
 * `item_reference`s through `resolveItem`; this module does no I/O. The call's messages are `instructions`
 * (never inherited from the previous response, as at OpenAI), then the history, then this request's input.
 * Fields the body may carry but no provider here can honour are dropped with one warning each; fields whose
 * meaning we cannot deliver at all (`background`, `conversation`, `prompt`) are a 400.
 */
import { ApiError } from '../../core/api-error.js';
import type { ChatCallOptions, ChatMessage, ResponseFormat } from '../../core/chat.js';
import type { CallWarning } from '../../core/call-context.js';
import { decodeInputItems } from './decode-input-items.js';
import { decodeToolChoice, decodeTools } from './decode-tools.js';
import type { ResponseEcho } from './response-object.js';
import type { ResponsesRequestBody, TextConfig, TextConfigEcho } from './wire-types.js';

/** The one `include` value whose content we return when the provider gives it (opaque reasoning state). */
const ENCRYPTED_REASONING = 'reasoning.encrypted_content';

export interface ResponsesDecodeContext {
  /** Canonical messages of the `previous_response_id` chain, already loaded by the route; empty without one. */
  history: readonly ChatMessage[];
  /** Resolves an `item_reference` id to a stored output item of this key's responses. */
  resolveItem: (id: string) => unknown;
}

export interface DecodedResponsesRequest {
  model: string;
  stream: boolean;
  /** Whether the response may be stored for `previous_response_id` and `item_reference` (default true). */
  store: boolean;
  options: ChatCallOptions;
  /** This request's input items as sent (a string input becomes one user message item). */
  inputItems: unknown[];
  /** This request's input alone as canonical messages: no history, no instructions. Stored for the next turn. */
  inputMessages: ChatMessage[];
  /** The request fields the response object echoes; spread into the encoders' `meta`. */
  echo: ResponseEcho;
  /** The caller asked for `reasoning.encrypted_content`; the route warns if the provider gave none. */
  includeEncryptedReasoning: boolean;
}

export function decodeResponsesRequest(
  body: ResponsesRequestBody,
  context: ResponsesDecodeContext,
  warn: (warning: CallWarning) => void,
): DecodedResponsesRequest {
  const warnOnce = onceByField(warn);
  rejectUnsupported(body);
  warnIgnoredFields(body, warnOnce);

  const inputItems: unknown[] =
    typeof body.input === 'string'
      ? [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: body.input }] }]
      : [...(body.input ?? [])];
  const inputMessages = decodeInputItems(inputItems, { resolveItem: context.resolveItem, warn: warnOnce });

  const messages: ChatMessage[] = [];
  if (typeof body.instructions === 'string' && body.instructions !== '') {
    messages.push({ role: 'system', content: [{ type: 'text', text: body.instructions }] });
  }
  messages.push(...context.history, ...inputMessages);
  if (!messages.some((message) => message.role !== 'system')) {
    throw new ApiError(400, 'The request has no input: send input items or a previous_response_id.', {
      param: 'input',
      code: 'invalid_value',
    });
  }

  const tools = decodeTools(body.tools, warnOnce);
  const toolChoice = decodeToolChoice(body.tool_choice, tools.tools, warnOnce);
  const options: ChatCallOptions = { messages };
  if (tools.tools.length > 0) {
    options.tools = tools.tools;
  }
  if (toolChoice.toolChoice) {
    options.toolChoice = toolChoice.toolChoice;
  }
  if (typeof body.parallel_tool_calls === 'boolean') {
    options.parallelToolCalls = body.parallel_tool_calls;
  }
  if (typeof body.max_output_tokens === 'number') {
    options.maxOutputTokens = body.max_output_tokens;
  }
  if (typeof body.temperature === 'number') {
    options.temperature = body.temperature;
  }
  if (typeof body.top_p === 'number') {
    options.topP = body.top_p;
  }
  const responseFormat = decodeTextFormat(body.text);
  if (responseFormat) {
    options.responseFormat = responseFormat;
  }
  if (typeof body.reasoning?.effort === 'string') {
    options.reasoning = { effort: body.reasoning.effort };
  }
  if (typeof body.user === 'string') {
    options.user = body.user;
  }

  return {
    model: body.model,
    stream: body.stream === true,
    store: body.store !== false,
    options,
    inputItems,
    inputMessages,
    echo: {
      instructions: typeof body.instructions === 'string' ? body.instructions : null,
      metadata: body.metadata ?? {},
      previousResponseId: body.previous_response_id ?? null,
      store: body.store !== false,
      temperature: body.temperature ?? null,
      topP: body.top_p ?? null,
      maxOutputTokens: body.max_output_tokens ?? null,
      text: echoText(body.text),
      toolChoice: toolChoice.echo,
      tools: tools.echo,
      toolNamespaces: tools.namespaces,
      parallelToolCalls: body.parallel_tool_calls ?? true,
      reasoning: { effort: body.reasoning?.effort ?? null, summary: body.reasoning?.summary ?? null },
    },
    includeEncryptedReasoning: (body.include ?? []).includes(ENCRYPTED_REASONING),
  };
}

/** Fields whose meaning we cannot deliver: answering without them would silently do something else. */
function rejectUnsupported(body: ResponsesRequestBody): void {
  if (body.background === true) {
    throw new ApiError(400, 'background responses are not supported; send the request without background.', {
      param: 'background',
      code: 'unsupported_parameter',
    });
  }
  if (body.conversation !== undefined && body.conversation !== null) {
    throw new ApiError(400, 'conversation is not supported; chain responses with previous_response_id instead.', {
      param: 'conversation',
      code: 'unsupported_parameter',
    });
  }
  if (body.prompt !== undefined && body.prompt !== null) {
    throw new ApiError(
      400,
      'Stored prompt templates (prompt) are not supported; send instructions and input instead.',
      {
        param: 'prompt',
        code: 'unsupported_parameter',
      },
    );
  }
}

const IGNORED_FIELDS: ReadonlyArray<[keyof ResponsesRequestBody, string]> = [
  ['prompt_cache_key', 'prompt caching is left to the provider'],
  ['prompt_cache_retention', 'prompt caching is left to the provider'],
  ['client_metadata', 'client metadata is not used'],
  ['safety_identifier', 'safety identifiers are not forwarded'],
  ['service_tier', 'service tiers are not supported'],
  ['context_management', 'server-side context management is not supported'],
  ['max_tool_calls', 'only function tools run, and the caller runs them'],
  ['top_logprobs', 'log probabilities are not returned'],
  ['stream_options', 'stream options are not supported'],
];

function warnIgnoredFields(body: ResponsesRequestBody, warn: (warning: CallWarning) => void): void {
  for (const [field, reason] of IGNORED_FIELDS) {
    if (body[field] !== undefined && body[field] !== null) {
      warn({ field, reason: `${reason}; ignored` });
    }
  }
  if (typeof body.truncation === 'string' && body.truncation !== 'disabled') {
    warn({ field: 'truncation', reason: `truncation '${body.truncation}' is not supported; input is never truncated` });
  }
  const include = (body.include ?? []).filter((value) => value !== ENCRYPTED_REASONING);
  if (include.length > 0) {
    warn({ field: 'include', reason: `${include.join(', ')} cannot be included; ignored` });
  }
  if (typeof body.text?.verbosity === 'string') {
    warn({ field: 'text.verbosity', reason: 'verbosity is not supported; ignored' });
  }
}

function decodeTextFormat(text: TextConfig | null | undefined): ResponseFormat | undefined {
  const format = text?.format;
  if (!format) {
    return undefined;
  }
  switch (format.type) {
    case 'text':
      return { type: 'text' };
    case 'json_object':
      return { type: 'json' };
    case 'json_schema': {
      const responseFormat: ResponseFormat = { type: 'json-schema', name: format.name, schema: format.schema };
      if (typeof format.description === 'string') {
        responseFormat.description = format.description;
      }
      if (typeof format.strict === 'boolean') {
        responseFormat.strict = format.strict;
      }
      return responseFormat;
    }
    default:
      throw new ApiError(400, `Unknown text.format type '${String((format as { type?: unknown }).type)}'.`, {
        param: 'text.format',
        code: 'invalid_value',
      });
  }
}

function echoText(text: TextConfig | null | undefined): TextConfigEcho {
  const echo: TextConfigEcho = { format: text?.format ?? { type: 'text' } };
  if (typeof text?.verbosity === 'string') {
    echo.verbosity = text.verbosity;
  }
  return echo;
}

/** A warn that passes each field's first warning only, so one request logs a field once. */
function onceByField(warn: (warning: CallWarning) => void): (warning: CallWarning) => void {
  const seen = new Set<string>();
  return (warning) => {
    if (!seen.has(warning.field)) {
      seen.add(warning.field);
      warn(warning);
    }
  };
}
