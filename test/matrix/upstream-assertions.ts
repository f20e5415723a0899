/**
 * What an upstream must have received: a request in ITS OWN dialect, on its own path, carrying the case's
 * system prompt, image, tool definitions, replayed tool turn and token limit in that dialect's places. A body of
 * one dialect reaching an upstream of another (e.g. an OpenAI `messages` list with `role: "system"` and
 * `tool_calls` at an Anthropic upstream) fails here.
 */
import { expect } from 'vitest';
import { PNG_BASE64, PNG_DATA_URL, WEATHER_TOOL, type Conversation } from './conversation.js';
import type { ReceivedRequest } from './scripted-upstreams.js';

type Json = Record<string, any>;

export type UpstreamDialect = 'openai-chat' | 'openai-responses' | 'anthropic-messages';

export interface UpstreamExpectation {
  dialect: UpstreamDialect;
  conversation: Conversation;
  stream: boolean;
  /** The upstream's own model name. */
  model: string;
  /** Native passthrough: the caller's body went through untouched (its extra field included). */
  passthrough: boolean;
  /** The caller's extra unknown top-level field. */
  extra: Record<string, unknown>;
  /** The credentials the provider is configured with; the caller's key must never reach the upstream. */
  upstreamKey: string;
  callerKey: string;
  /** The `max_tokens` an Anthropic upstream must get: the caller's, else the gateway's default. */
  anthropicMaxTokens?: number;
}

/** Keys that only ever appear in the other dialects' request bodies. */
const FOREIGN_KEYS: Record<UpstreamDialect, string[]> = {
  'openai-chat': [
    'input',
    'instructions',
    'system',
    'max_output_tokens',
    'stop_sequences',
    'choices',
    'previous_response_id',
  ],
  'openai-responses': ['messages', 'system', 'max_tokens', 'max_completion_tokens', 'stream_options', 'choices'],
  'anthropic-messages': [
    'input',
    'instructions',
    'max_completion_tokens',
    'max_output_tokens',
    'stream_options',
    'choices',
    'n',
    'response_format',
    'previous_response_id',
  ],
};

export function assertUpstreamRequest(request: ReceivedRequest, expectation: UpstreamExpectation): void {
  const body = request.body as Json;
  expect(request.method).toBe('POST');
  expect(request.headers['content-type']).toMatch(/^application\/json/);
  expect(body.model, 'the model is the upstream’s own name').toBe(expectation.model);
  for (const key of FOREIGN_KEYS[expectation.dialect]) {
    expect(body, `a ${expectation.dialect} upstream got the foreign key '${key}'`).not.toHaveProperty(key);
  }
  const serialized = JSON.stringify(request.headers);
  expect(serialized, 'the caller’s key never reaches the upstream').not.toContain(expectation.callerKey);
  for (const [key, value] of Object.entries(expectation.extra)) {
    if (expectation.passthrough) {
      expect(body[key], `passthrough keeps the caller’s '${key}'`).toEqual(value);
    } else {
      expect(body, `a translated request drops the caller’s '${key}'`).not.toHaveProperty(key);
    }
  }
  switch (expectation.dialect) {
    case 'openai-chat':
      assertChatRequest(request, body, expectation);
      break;
    case 'openai-responses':
      assertResponsesRequest(request, body, expectation);
      break;
    case 'anthropic-messages':
      assertAnthropicRequest(request, body, expectation);
      break;
  }
}

function textOfChatContent(content: unknown): string {
  if (typeof content === 'string') {
    return content;
  }
  return ((content ?? []) as Json[])
    .filter((part) => part.type === 'text')
    .map((part) => part.text as string)
    .join('');
}

function assertChatRequest(request: ReceivedRequest, body: Json, expectation: UpstreamExpectation): void {
  const { conversation } = expectation;
  expect(request.url).toBe('/v1/chat/completions');
  expect(request.headers.authorization).toBe(`Bearer ${expectation.upstreamKey}`);
  expect(request.headers['x-api-key']).toBeUndefined();
  expect(Array.isArray(body.messages)).toBe(true);
  const messages = body.messages as Json[];
  for (const message of messages) {
    expect(['system', 'developer', 'user', 'assistant', 'tool']).toContain(message.role);
    if (Array.isArray(message.content)) {
      for (const part of message.content as Json[]) {
        expect(['text', 'image_url'], `chat content part type '${part.type}'`).toContain(part.type);
      }
    }
  }
  expect(body.stream === true).toBe(expectation.stream);
  if (expectation.stream) {
    expect(body.stream_options?.include_usage, 'a streamed chat call asks for usage').toBe(true);
  }
  // System prompt: a `system` message first.
  if (conversation.system) {
    expect(messages[0].role).toBe('system');
    expect(textOfChatContent(messages[0].content)).toBe(conversation.system);
  } else {
    expect(messages.some((message) => message.role === 'system')).toBe(false);
  }
  const user = messages.find((message) => message.role === 'user');
  expect(textOfChatContent(user?.content)).toBe(conversation.userText);
  if (conversation.image) {
    expect(user?.content).toContainEqual({
      type: 'image_url',
      image_url: expect.objectContaining({ url: PNG_DATA_URL }),
    });
  }
  if (conversation.tools) {
    expect(body.tools).toHaveLength(1);
    expect(body.tools[0].type).toBe('function');
    expect(body.tools[0].function.name).toBe(WEATHER_TOOL.name);
    expect(body.tools[0].function.parameters).toEqual(WEATHER_TOOL.parameters);
  } else {
    expect(body.tools).toBeUndefined();
  }
  if (conversation.toolTurn) {
    const turn = conversation.toolTurn;
    const assistant = messages.find((message) => message.role === 'assistant');
    expect(assistant?.tool_calls).toHaveLength(1);
    expect(assistant!.tool_calls[0]).toMatchObject({ id: turn.id, type: 'function', function: { name: turn.name } });
    expect(JSON.parse(assistant!.tool_calls[0].function.arguments as string)).toEqual(turn.args);
    const tool = messages.find((message) => message.role === 'tool');
    expect(tool).toMatchObject({ tool_call_id: turn.id });
    expect(textOfChatContent(tool!.content)).toBe(turn.result);
    expect(messages.map((message) => message.role).slice(-3)).toEqual(['user', 'assistant', 'tool']);
  }
  if (conversation.maxTokens !== undefined) {
    expect(body.max_tokens ?? body.max_completion_tokens).toBe(conversation.maxTokens);
  }
}

function assertResponsesRequest(request: ReceivedRequest, body: Json, expectation: UpstreamExpectation): void {
  const { conversation } = expectation;
  expect(request.url).toBe('/v1/responses');
  expect(request.headers.authorization).toBe(`Bearer ${expectation.upstreamKey}`);
  expect(Array.isArray(body.input)).toBe(true);
  const input = body.input as Json[];
  expect(body.stream === true).toBe(expectation.stream);
  if (conversation.system) {
    expect(body.instructions).toBe(conversation.system);
  }
  const user = input.find((item) => item.role === 'user');
  expect(user?.content).toContainEqual({ type: 'input_text', text: conversation.userText });
  if (conversation.image) {
    expect(user?.content).toContainEqual(expect.objectContaining({ type: 'input_image', image_url: PNG_DATA_URL }));
  }
  if (conversation.tools) {
    expect(body.tools).toEqual([
      expect.objectContaining({ type: 'function', name: WEATHER_TOOL.name, parameters: WEATHER_TOOL.parameters }),
    ]);
  }
  if (conversation.toolTurn) {
    const turn = conversation.toolTurn;
    const call = input.find((item) => item.type === 'function_call');
    expect(call).toMatchObject({ call_id: turn.id, name: turn.name });
    expect(JSON.parse(call!.arguments as string)).toEqual(turn.args);
    expect(input.find((item) => item.type === 'function_call_output')).toMatchObject({
      call_id: turn.id,
      output: turn.result,
    });
  }
  if (conversation.maxTokens !== undefined) {
    expect(body.max_output_tokens).toBe(conversation.maxTokens);
  }
}

function anthropicBlocks(content: unknown): Json[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : (content as Json[]);
}

function assertAnthropicRequest(request: ReceivedRequest, body: Json, expectation: UpstreamExpectation): void {
  const { conversation } = expectation;
  expect(request.url.split('?')[0], 'an Anthropic upstream is called on /v1/messages').toBe('/v1/messages');
  expect(request.headers['x-api-key']).toBe(expectation.upstreamKey);
  expect(request.headers['anthropic-version']).toBe('2023-06-01');
  expect(request.headers.authorization, 'no OpenAI-style bearer header to Anthropic').toBeUndefined();
  expect(typeof body.max_tokens, 'max_tokens is required by Anthropic').toBe('number');
  expect(body.max_tokens).toBe(expectation.anthropicMaxTokens);
  const messages = body.messages as Json[];
  expect(Array.isArray(messages)).toBe(true);
  for (const [index, message] of messages.entries()) {
    expect(['user', 'assistant'], 'Anthropic messages are user or assistant turns').toContain(message.role);
    expect(message).not.toHaveProperty('tool_calls');
    expect(message).not.toHaveProperty('tool_call_id');
    if (index > 0) {
      expect(message.role, 'roles alternate').not.toBe(messages[index - 1].role);
    }
    for (const block of anthropicBlocks(message.content)) {
      expect(
        ['text', 'image', 'tool_use', 'tool_result', 'thinking', 'redacted_thinking'],
        `Anthropic block type '${block.type}'`,
      ).toContain(block.type);
    }
  }
  expect(body.stream === true).toBe(expectation.stream);
  // System prompt: top-level `system` (a string or text blocks), never a message.
  if (conversation.system) {
    const system = anthropicBlocks(body.system);
    expect(system.every((block) => block.type === 'text')).toBe(true);
    expect(system.map((block) => block.text as string).join('')).toBe(conversation.system);
  } else {
    expect(body.system).toBeUndefined();
  }
  const firstUser = anthropicBlocks(messages[0].content);
  expect(messages[0].role).toBe('user');
  expect(
    firstUser
      .filter((block) => block.type === 'text')
      .map((block) => block.text as string)
      .join(''),
  ).toBe(conversation.userText);
  if (conversation.image) {
    expect(firstUser).toContainEqual({
      type: 'image',
      source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 },
    });
  }
  if (conversation.tools) {
    expect(body.tools).toHaveLength(1);
    expect(body.tools[0]).not.toHaveProperty('function');
    expect(body.tools[0]).toMatchObject({ name: WEATHER_TOOL.name, input_schema: WEATHER_TOOL.parameters });
  } else {
    expect(body.tools).toBeUndefined();
  }
  if (conversation.toolTurn) {
    const turn = conversation.toolTurn;
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(anthropicBlocks(messages[1].content)).toContainEqual({
      type: 'tool_use',
      id: turn.id,
      name: turn.name,
      input: turn.args,
    });
    const result = anthropicBlocks(messages[2].content).find((block) => block.type === 'tool_result');
    expect(result).toMatchObject({ tool_use_id: turn.id });
    const content =
      typeof result!.content === 'string'
        ? result!.content
        : (result!.content as Json[]).map((block) => block.text as string).join('');
    expect(content).toBe(turn.result);
  }
}
