/**
 * The translation matrix's cases, written once as a dialect-neutral conversation and rendered into each caller
 * dialect's request body (chat completions, Responses, Anthropic Messages) and into the canonical options the
 * built-in reference model would get. The reference model's answer to those options is what every provider is
 * scripted to answer too, so the expected far-end content is the same in every cell of the matrix.
 */
import { createLocalChatModel } from '../../server/providers/local/chat.js';
import type { ChatCallOptions, ChatMessage, ChatResult, ToolDefinition } from '../../server/core/chat.js';

export type CallerDialect = 'chat' | 'responses' | 'anthropic';

export type CaseName = 'text' | 'tool-call' | 'tool-result' | 'system' | 'image' | 'length' | 'usage';

export interface Conversation {
  system?: string;
  userText: string;
  image?: boolean;
  tools?: boolean;
  /** An earlier assistant tool call and its result, replayed before the model answers. */
  toolTurn?: { id: string; name: string; args: Record<string, unknown>; result: string };
  /** Max output tokens; Anthropic callers always send one (`DEFAULT_ANTHROPIC_MAX_TOKENS` otherwise). */
  maxTokens?: number;
}

export const DEFAULT_ANTHROPIC_MAX_TOKENS = 1024;

/** A 1×1 transparent PNG. */
export const PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
export const PNG_DATA_URL = `data:image/png;base64,${PNG_BASE64}`;

export const SYSTEM_PROMPT = 'You are a terse assistant. Answer in one line.';

/** Long enough that its arguments arrive in many fragments. */
export const WEATHER_ARGS = { city: 'Paris', unit: 'celsius', days: 3, note: 'include humidity and wind speed' };

export const WEATHER_TOOL: ToolDefinition = {
  name: 'get_weather',
  description: 'Current weather for a city',
  parameters: {
    type: 'object',
    properties: {
      city: { type: 'string' },
      unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
      days: { type: 'integer' },
      note: { type: 'string' },
    },
    required: ['city'],
  },
};

const LONG_TEXT =
  'Please repeat after me every single word of this deliberately long sentence, which goes on and on about ' +
  'gateways, dialects, tokens, streams, fragments and usage numbers, so that sixteen tokens cannot hold it.';

export const CASES: Record<CaseName, Conversation> = {
  text: { userText: 'Hello there, gateway!' },
  'tool-call': { userText: `call get_weather ${JSON.stringify(WEATHER_ARGS)}`, tools: true },
  'tool-result': {
    userText: `call get_weather ${JSON.stringify(WEATHER_ARGS)}`,
    tools: true,
    toolTurn: {
      id: 'call_matrix_0001',
      name: 'get_weather',
      args: WEATHER_ARGS,
      result: '{"temp_c":21,"sky":"clear"}',
    },
  },
  system: { system: SYSTEM_PROMPT, userText: 'Hello there' },
  image: { userText: 'What is in this picture?', image: true },
  length: { userText: LONG_TEXT, maxTokens: 16 },
  usage: { userText: 'Count my tokens, please.' },
};

export const CASE_NAMES = Object.keys(CASES) as CaseName[];

/** What the caller asked for, in the canonical core's terms (the same whatever the dialect). */
export function canonicalOptions(conversation: Conversation, dialect: CallerDialect): ChatCallOptions {
  const messages: ChatMessage[] = [];
  if (conversation.system) {
    messages.push({ role: 'system', content: [{ type: 'text', text: conversation.system }] });
  }
  messages.push({
    role: 'user',
    content: [
      { type: 'text', text: conversation.userText },
      ...(conversation.image ? [{ type: 'image' as const, url: PNG_DATA_URL }] : []),
    ],
  });
  if (conversation.toolTurn) {
    const turn = conversation.toolTurn;
    messages.push({
      role: 'assistant',
      content: [{ type: 'tool-call', id: turn.id, name: turn.name, arguments: JSON.stringify(turn.args) }],
    });
    messages.push({
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: turn.id, content: [{ type: 'text', text: turn.result }] }],
    });
  }
  const options: ChatCallOptions = { messages };
  if (conversation.tools) {
    options.tools = [WEATHER_TOOL];
  }
  const maxTokens = conversation.maxTokens ?? (dialect === 'anthropic' ? DEFAULT_ANTHROPIC_MAX_TOKENS : undefined);
  if (maxTokens !== undefined) {
    options.maxOutputTokens = maxTokens;
  }
  return options;
}

/** The reference model's answer: what every provider in the matrix is expected (or scripted) to answer. */
export async function referenceAnswer(conversation: Conversation, dialect: CallerDialect): Promise<ChatResult> {
  const model = createLocalChatModel();
  return model.generate(canonicalOptions(conversation, dialect), {
    signal: new AbortController().signal,
    requestId: 'req_matrix_reference',
    warn: () => {},
  });
}

/** The caller's request body in its own dialect. `extra` is merged in at the top level (e.g. `x_custom`). */
export function callerBody(
  dialect: CallerDialect,
  conversation: Conversation,
  model: string,
  stream: boolean,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  switch (dialect) {
    case 'chat':
      return { ...chatBody(conversation, model, stream), ...extra };
    case 'responses':
      return { ...responsesBody(conversation, model, stream), ...extra };
    case 'anthropic':
      return { ...anthropicBody(conversation, model, stream), ...extra };
  }
}

/** Whether a chat-completions caller asks for usage in the stream: every case but `text` (which checks the opposite). */
export function chatIncludeUsage(caseName: CaseName): boolean {
  return caseName !== 'text';
}

function chatBody(conversation: Conversation, model: string, stream: boolean): Record<string, unknown> {
  const messages: unknown[] = [];
  if (conversation.system) {
    messages.push({ role: 'system', content: conversation.system });
  }
  messages.push({
    role: 'user',
    content: conversation.image
      ? [
          { type: 'text', text: conversation.userText },
          { type: 'image_url', image_url: { url: PNG_DATA_URL } },
        ]
      : conversation.userText,
  });
  if (conversation.toolTurn) {
    const turn = conversation.toolTurn;
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: turn.id, type: 'function', function: { name: turn.name, arguments: JSON.stringify(turn.args) } },
      ],
    });
    messages.push({ role: 'tool', tool_call_id: turn.id, content: turn.result });
  }
  const body: Record<string, unknown> = { model, messages };
  if (conversation.tools) {
    body.tools = [
      {
        type: 'function',
        function: {
          name: WEATHER_TOOL.name,
          description: WEATHER_TOOL.description,
          parameters: WEATHER_TOOL.parameters,
        },
      },
    ];
  }
  if (conversation.maxTokens !== undefined) {
    body.max_completion_tokens = conversation.maxTokens;
  }
  if (stream) {
    body.stream = true;
  }
  return body;
}

function responsesBody(conversation: Conversation, model: string, stream: boolean): Record<string, unknown> {
  const content: unknown[] = [{ type: 'input_text', text: conversation.userText }];
  if (conversation.image) {
    content.push({ type: 'input_image', image_url: PNG_DATA_URL, detail: 'auto' });
  }
  const input: unknown[] = [{ type: 'message', role: 'user', content }];
  if (conversation.toolTurn) {
    const turn = conversation.toolTurn;
    input.push({ type: 'function_call', call_id: turn.id, name: turn.name, arguments: JSON.stringify(turn.args) });
    input.push({ type: 'function_call_output', call_id: turn.id, output: turn.result });
  }
  const body: Record<string, unknown> = { model, input };
  if (conversation.system) {
    body.instructions = conversation.system;
  }
  if (conversation.tools) {
    body.tools = [
      {
        type: 'function',
        name: WEATHER_TOOL.name,
        description: WEATHER_TOOL.description,
        parameters: WEATHER_TOOL.parameters,
        strict: false,
      },
    ];
  }
  if (conversation.maxTokens !== undefined) {
    body.max_output_tokens = conversation.maxTokens;
  }
  if (stream) {
    body.stream = true;
  }
  return body;
}

function anthropicBody(conversation: Conversation, model: string, stream: boolean): Record<string, unknown> {
  const userContent: unknown[] = [{ type: 'text', text: conversation.userText }];
  if (conversation.image) {
    userContent.push({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } });
  }
  const messages: unknown[] = [{ role: 'user', content: userContent }];
  if (conversation.toolTurn) {
    const turn = conversation.toolTurn;
    messages.push({
      role: 'assistant',
      content: [{ type: 'tool_use', id: turn.id, name: turn.name, input: turn.args }],
    });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: turn.id, content: turn.result }] });
  }
  const body: Record<string, unknown> = {
    model,
    max_tokens: conversation.maxTokens ?? DEFAULT_ANTHROPIC_MAX_TOKENS,
    messages,
  };
  if (conversation.system) {
    body.system = conversation.system;
  }
  if (conversation.tools) {
    body.tools = [
      { name: WEATHER_TOOL.name, description: WEATHER_TOOL.description, input_schema: WEATHER_TOOL.parameters },
    ];
  }
  if (stream) {
    body.stream = true;
  }
  return body;
}
