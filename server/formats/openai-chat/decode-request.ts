/**
 * `POST /v1/chat/completions` body → canonical `ChatCallOptions`, plus the few transport facts the route
 * needs (`model`, `stream`, `include_usage`).
 *
 * The body has already passed the spec validator; this module only decides meaning. Fields the canonical core
 * cannot carry are reported once each through `warn` and dropped; the only 400s are requests whose meaning
 * we cannot keep (`n` > 1, audio or file content, the deprecated `function` role).
 */
import { ApiError } from '../../core/api-error.js';
import { cutText } from '../../core/quote-value.js';
import type { ChatCallOptions, ResponseFormat, ToolChoice, ToolDefinition } from '../../core/chat.js';
import type { CallWarning } from '../../core/call-context.js';
import { decodeMessages } from './decode-messages.js';
import type { ChatCompletionRequest, ChatResponseFormat, ChatTool, ChatToolChoice } from './wire-types.js';

export interface DecodedChatRequest {
  model: string;
  stream: boolean;
  includeUsage: boolean;
  options: ChatCallOptions;
}

/** Fields we accept for compatibility but cannot honour, with the value that means "nothing asked". */
const IGNORED_FIELDS = new Map<string, (value: unknown) => boolean>(
  Object.entries({
    logit_bias: isEmptyObject,
    logprobs: isFalse,
    top_logprobs: isZero,
    frequency_penalty: isZero,
    presence_penalty: isZero,
    modalities: (value) => Array.isArray(value) && value.every((item) => item === 'text'),
    audio: () => false,
    prediction: () => false,
    web_search_options: () => false,
    service_tier: (value) => value === 'auto' || value === 'default',
    store: isFalse,
    metadata: isEmptyObject,
    verbosity: () => false,
    prompt_cache_key: () => false,
    safety_identifier: () => false,
    functions: (value) => Array.isArray(value) && value.length === 0,
    function_call: () => false,
  } satisfies Record<string, (value: unknown) => boolean>),
);

/** How many unknown field names one warning quotes; the rest are counted. */
const UNKNOWN_FIELDS_NAMED = 5;

/** Fields this decoder reads; anything else (vendor extensions such as `min_p`) is warned about and dropped. */
const HANDLED_FIELDS = new Set([
  'model',
  'messages',
  'stream',
  'stream_options',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'top_k',
  'n',
  'stop',
  'seed',
  'user',
  'response_format',
  'reasoning_effort',
]);

function isFalse(value: unknown): boolean {
  return value === false;
}

function isZero(value: unknown): boolean {
  return value === 0;
}

function isEmptyObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Object.keys(value).length === 0;
}

function isNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function decodeTools(tools: ChatTool[], warn: (warning: CallWarning) => void): ToolDefinition[] {
  const decoded: ToolDefinition[] = [];
  let warnedOther = false;
  for (const tool of tools) {
    if (tool.type !== 'function') {
      if (!warnedOther) {
        warnedOther = true;
        warn({
          field: 'tools[].type',
          reason: `tools of type '${String(tool.type)}' are not supported; the tool was not offered to the model`,
        });
      }
      continue;
    }
    const { function: fn } = tool;
    const definition: ToolDefinition = {
      name: fn.name,
      // OpenAI documents an omitted `parameters` as a function taking no arguments.
      parameters: fn.parameters ?? { type: 'object', properties: {} },
    };
    if (typeof fn.description === 'string') {
      definition.description = fn.description;
    }
    if (typeof fn.strict === 'boolean') {
      definition.strict = fn.strict;
    }
    decoded.push(definition);
  }
  return decoded;
}

function decodeToolChoice(choice: ChatToolChoice, warn: (warning: CallWarning) => void): ToolChoice | undefined {
  if (choice === 'none' || choice === 'auto' || choice === 'required') {
    return { type: choice };
  }
  if (typeof choice === 'object' && choice !== null) {
    if (choice.type === 'function' && typeof choice.function?.name === 'string') {
      return { type: 'tool', name: choice.function.name };
    }
    // The contract admits only named function choices; OpenAI's `allowed_tools` (and anything newer) is still
    // read defensively, through a wider view of the same object.
    const other: { type?: unknown; allowed_tools?: { mode?: unknown } } = choice;
    if (other.type === 'allowed_tools') {
      const mode = other.allowed_tools?.mode;
      warn({
        field: 'tool_choice.allowed_tools',
        reason: 'restricting the allowed tools is not supported; all tools stay available',
      });
      return { type: mode === 'required' ? 'required' : 'auto' };
    }
    warn({ field: 'tool_choice', reason: `tool_choice of type '${String(other.type)}' is not supported; using auto` });
  }
  return undefined;
}

function decodeResponseFormat(format: ChatResponseFormat): ResponseFormat | undefined {
  switch (format.type) {
    case 'text':
      return { type: 'text' };
    case 'json_object':
      return { type: 'json' };
    case 'json_schema': {
      const { json_schema: spec } = format;
      const decoded: ResponseFormat = { type: 'json-schema', name: spec.name, schema: spec.schema ?? {} };
      if (typeof spec.description === 'string') {
        decoded.description = spec.description;
      }
      if (typeof spec.strict === 'boolean') {
        decoded.strict = spec.strict;
      }
      return decoded;
    }
    default:
      return undefined;
  }
}

function decodeStop(stop: ChatCompletionRequest['stop']): string[] | undefined {
  if (typeof stop === 'string') {
    return [stop];
  }
  if (Array.isArray(stop) && stop.length > 0) {
    return [...stop];
  }
  return undefined;
}

export function decodeChatRequest(
  body: ChatCompletionRequest,
  warn: (warning: CallWarning) => void,
): DecodedChatRequest {
  if (isNumber(body.n) && body.n > 1) {
    throw new ApiError(400, 'Only one choice per request is supported; set n to 1 or leave it out.', { param: 'n' });
  }

  const options: ChatCallOptions = { messages: decodeMessages(body.messages, warn) };

  if (Array.isArray(body.tools) && body.tools.length > 0) {
    const tools = decodeTools(body.tools, warn);
    if (tools.length > 0) {
      options.tools = tools;
    }
  }
  if (body.tool_choice !== undefined && body.tool_choice !== null) {
    const toolChoice = decodeToolChoice(body.tool_choice, warn);
    if (toolChoice) {
      options.toolChoice = toolChoice;
    }
  }
  if (typeof body.parallel_tool_calls === 'boolean') {
    options.parallelToolCalls = body.parallel_tool_calls;
  }
  // `max_completion_tokens` replaced `max_tokens`; when a client sends both, the newer field wins.
  const maxOutputTokens = isNumber(body.max_completion_tokens) ? body.max_completion_tokens : body.max_tokens;
  if (isNumber(maxOutputTokens)) {
    options.maxOutputTokens = maxOutputTokens;
  }
  if (isNumber(body.temperature)) {
    options.temperature = body.temperature;
  }
  if (isNumber(body.top_p)) {
    options.topP = body.top_p;
  }
  // `top_k` is not in the contract (which accepts and ignores unknown top-level fields), but vLLM, llama.cpp
  // and Ollama take it, so it is read from the body as a plain record.
  const extensions: Record<string, unknown> = body;
  if (isNumber(extensions.top_k)) {
    options.topK = extensions.top_k;
  }
  const stopSequences = decodeStop(body.stop);
  if (stopSequences) {
    options.stopSequences = stopSequences;
  }
  if (isNumber(body.seed)) {
    options.seed = body.seed;
  }
  if (typeof body.user === 'string') {
    options.user = body.user;
  }
  if (body.response_format && typeof body.response_format === 'object') {
    const responseFormat = decodeResponseFormat(body.response_format);
    if (responseFormat) {
      options.responseFormat = responseFormat;
    }
  }
  if (typeof body.reasoning_effort === 'string') {
    options.reasoning = { effort: body.reasoning_effort };
  }

  const streamOptions = body.stream_options ?? undefined;
  if (streamOptions?.include_obfuscation === true) {
    warn({ field: 'stream_options.include_obfuscation', reason: 'stream obfuscation is not supported; ignored' });
  }
  // A Map, not an object lookup: a body key such as `hasOwnProperty` or `__proto__` must not find a prototype member.
  const unknown: string[] = [];
  for (const [field, value] of Object.entries(body)) {
    if (value === undefined || value === null || HANDLED_FIELDS.has(field)) {
      continue;
    }
    const isNoop = IGNORED_FIELDS.get(field);
    if (isNoop) {
      if (!isNoop(value)) {
        warn({ field, reason: 'not supported by this gateway; ignored' });
      }
    } else {
      unknown.push(field);
    }
  }
  if (unknown.length === 1) {
    warn({ field: unknown[0]!, reason: 'unknown field; ignored' });
  } else if (unknown.length > 1) {
    const named = unknown.slice(0, UNKNOWN_FIELDS_NAMED).map((name) => cutText(name, 40));
    const more = unknown.length > UNKNOWN_FIELDS_NAMED ? `, and ${unknown.length - UNKNOWN_FIELDS_NAMED} more` : '';
    warn({ field: `${unknown.length} unknown fields`, reason: `${named.join(', ')}${more}; ignored` });
  }

  const stream = body.stream === true;
  return {
    model: body.model,
    stream,
    includeUsage: stream && streamOptions?.include_usage === true,
    options,
  };
}
