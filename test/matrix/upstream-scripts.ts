/**
 * Scripted upstream answers in each upstream's REAL wire format, built from one dialect-neutral reply:
 * OpenAI chat completions (JSON, or SSE chunks ending in `[DONE]`, with the usage-only chunk only when the
 * request asked for it, as OpenAI does), OpenAI Responses (JSON, or the `response.*` event sequence) and
 * Anthropic Messages (JSON, or `message_start` … `message_stop`). Text and tool-call arguments are cut into
 * small fragments, so a gateway that drops, merges wrongly or reorders fragments is caught.
 */
import type { ServerResponse } from 'node:http';

export interface ScriptedToolCall {
  /** The id in the upstream's own style (`call_…`, `toolu_…`). */
  id: string;
  name: string;
  /** Compact JSON text of the arguments. */
  arguments: string;
}

export interface ScriptedUsage {
  /** The whole input, cache reads and writes included (OpenAI's convention). */
  input: number;
  output: number;
  cacheRead: number;
  /** Anthropic only: OpenAI reports no cache writes. */
  cacheWrite: number;
  /** OpenAI only: reasoning tokens inside `output`. */
  reasoning: number;
  /**
   * Anthropic streams: when true, `message_delta.usage` carries only `output_tokens` (older API behaviour),
   * so the input and cache counters are known from `message_start` alone.
   */
  outputOnlyInDelta?: boolean;
}

export interface ScriptedReply {
  text: string;
  /** Tool calls after the text, in order (parallel calls when more than one). */
  toolCalls?: ScriptedToolCall[];
  finish: 'stop' | 'length' | 'tool-calls';
  usage: ScriptedUsage;
  /** The upstream's own model name, echoed in its answer. */
  model: string;
}

export interface ScriptedAnswer {
  contentType: string;
  /** The whole body as the fake writes it. */
  body: string;
  /** SSE only: each event's data string, in order (the `[DONE]` terminator included). */
  events?: Array<{ event?: string; data: string }>;
  /** Per tool call: how many upstream chunks/events carried its argument fragments (1 for JSON). */
  argumentChunks: number[];
}

/** Cuts text into pieces of `size` characters (code points, never halves of a surrogate pair). */
export function fragments(text: string, size: number): string[] {
  const chars = Array.from(text);
  const pieces: string[] = [];
  for (let at = 0; at < chars.length; at += size) {
    pieces.push(chars.slice(at, at + size).join(''));
  }
  return pieces;
}

const TEXT_PIECE = 5;
const ARGUMENT_PIECE = 4;

function sse(events: Array<{ event?: string; data: string }>): string {
  return events.map((event) => `${event.event ? `event: ${event.event}\n` : ''}data: ${event.data}\n\n`).join('');
}

// ---------------------------------------------------------------- OpenAI chat completions

function chatFinishReason(finish: ScriptedReply['finish']): string {
  return finish === 'tool-calls' ? 'tool_calls' : finish;
}

function chatUsage(usage: ScriptedUsage): Record<string, unknown> {
  return {
    prompt_tokens: usage.input,
    completion_tokens: usage.output,
    total_tokens: usage.input + usage.output,
    prompt_tokens_details: { cached_tokens: usage.cacheRead, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: usage.reasoning,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

export function chatCompletionJson(reply: ScriptedReply): ScriptedAnswer {
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: reply.text === '' ? null : reply.text,
    refusal: null,
    annotations: [],
  };
  const calls = reply.toolCalls ?? [];
  if (calls.length > 0) {
    message.tool_calls = calls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.arguments },
    }));
  }
  const body = {
    id: 'chatcmpl-matrix0001',
    object: 'chat.completion',
    created: 1767225601,
    model: reply.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: chatFinishReason(reply.finish) }],
    usage: chatUsage(reply.usage),
    service_tier: 'default',
    system_fingerprint: 'fp_matrix01',
  };
  return { contentType: 'application/json', body: JSON.stringify(body), argumentChunks: calls.map(() => 1) };
}

export function chatCompletionSse(reply: ScriptedReply, includeUsage: boolean): ScriptedAnswer {
  const base = {
    id: 'chatcmpl-matrix0001',
    object: 'chat.completion.chunk',
    created: 1767225601,
    model: reply.model,
    service_tier: 'default',
    system_fingerprint: 'fp_matrix01',
  };
  const usageField = includeUsage ? { usage: null } : {};
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) =>
    JSON.stringify({
      ...base,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      ...usageField,
    });
  const events: Array<{ data: string }> = [{ data: chunk({ role: 'assistant', content: '', refusal: null }) }];
  for (const piece of fragments(reply.text, TEXT_PIECE)) {
    events.push({ data: chunk({ content: piece }) });
  }
  const argumentChunks: number[] = [];
  for (const [index, call] of (reply.toolCalls ?? []).entries()) {
    events.push({
      data: chunk({
        tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
      }),
    });
    const pieces = fragments(call.arguments, ARGUMENT_PIECE);
    for (const piece of pieces) {
      events.push({ data: chunk({ tool_calls: [{ index, function: { arguments: piece } }] }) });
    }
    argumentChunks.push(pieces.length);
  }
  events.push({ data: chunk({}, chatFinishReason(reply.finish)) });
  if (includeUsage) {
    events.push({ data: JSON.stringify({ ...base, choices: [], usage: chatUsage(reply.usage) }) });
  }
  events.push({ data: '[DONE]' });
  return { contentType: 'text/event-stream; charset=utf-8', body: sse(events), events, argumentChunks };
}

// ---------------------------------------------------------------- OpenAI Responses

function responsesUsage(usage: ScriptedUsage): Record<string, unknown> {
  return {
    input_tokens: usage.input,
    input_tokens_details: { cached_tokens: usage.cacheRead },
    output_tokens: usage.output,
    output_tokens_details: { reasoning_tokens: usage.reasoning },
    total_tokens: usage.input + usage.output,
  };
}

const RESPONSE_ID = 'resp_matrix0001';
const MESSAGE_ITEM_ID = 'msg_matrix0001';
function callItemId(index: number): string {
  return `fc_matrix000${index + 1}`;
}

function responseObject(
  reply: ScriptedReply,
  status: 'in_progress' | 'completed' | 'incomplete',
  output: unknown[],
  usage: unknown,
): Record<string, unknown> {
  return {
    id: RESPONSE_ID,
    object: 'response',
    created_at: 1767225601,
    status,
    background: false,
    error: null,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: null,
    max_output_tokens: null,
    max_tool_calls: null,
    model: reply.model,
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    service_tier: 'default',
    store: true,
    temperature: 1,
    text: { format: { type: 'text' }, verbosity: 'medium' },
    tool_choice: 'auto',
    tools: [],
    top_logprobs: 0,
    top_p: 1,
    truncation: 'disabled',
    usage,
    user: null,
    metadata: {},
  };
}

function finalStatus(reply: ScriptedReply): 'completed' | 'incomplete' {
  return reply.finish === 'length' ? 'incomplete' : 'completed';
}

function messageItem(
  _reply: ScriptedReply,
  status: 'in_progress' | 'completed' | 'incomplete',
  text: string | null,
): Record<string, unknown> {
  return {
    id: MESSAGE_ITEM_ID,
    type: 'message',
    status,
    role: 'assistant',
    content: text === null ? [] : [{ type: 'output_text', annotations: [], logprobs: [], text }],
  };
}

function callItem(
  call: ScriptedToolCall,
  index: number,
  status: 'in_progress' | 'completed',
  args: string,
): Record<string, unknown> {
  return { id: callItemId(index), type: 'function_call', status, arguments: args, call_id: call.id, name: call.name };
}

function responsesOutput(reply: ScriptedReply): unknown[] {
  const output: unknown[] = [];
  if (reply.text !== '') {
    output.push(messageItem(reply, finalStatus(reply), reply.text));
  }
  for (const [index, call] of (reply.toolCalls ?? []).entries()) {
    output.push(callItem(call, index, 'completed', call.arguments));
  }
  return output;
}

export function responsesJson(reply: ScriptedReply): ScriptedAnswer {
  const body = responseObject(reply, finalStatus(reply), responsesOutput(reply), responsesUsage(reply.usage));
  return {
    contentType: 'application/json',
    body: JSON.stringify(body),
    argumentChunks: (reply.toolCalls ?? []).map(() => 1),
  };
}

export function responsesSse(reply: ScriptedReply): ScriptedAnswer {
  const events: Array<{ event: string; data: string }> = [];
  let sequence = 0;
  const emit = (type: string, fields: Record<string, unknown>) => {
    events.push({ event: type, data: JSON.stringify({ type, sequence_number: sequence++, ...fields }) });
  };
  emit('response.created', { response: responseObject(reply, 'in_progress', [], null) });
  emit('response.in_progress', { response: responseObject(reply, 'in_progress', [], null) });
  let outputIndex = 0;
  if (reply.text !== '') {
    const part = { type: 'output_text', annotations: [], logprobs: [], text: '' };
    emit('response.output_item.added', { output_index: outputIndex, item: messageItem(reply, 'in_progress', null) });
    emit('response.content_part.added', {
      item_id: MESSAGE_ITEM_ID,
      output_index: outputIndex,
      content_index: 0,
      part,
    });
    for (const piece of fragments(reply.text, TEXT_PIECE)) {
      emit('response.output_text.delta', {
        item_id: MESSAGE_ITEM_ID,
        output_index: outputIndex,
        content_index: 0,
        delta: piece,
        logprobs: [],
      });
    }
    emit('response.output_text.done', {
      item_id: MESSAGE_ITEM_ID,
      output_index: outputIndex,
      content_index: 0,
      text: reply.text,
      logprobs: [],
    });
    emit('response.content_part.done', {
      item_id: MESSAGE_ITEM_ID,
      output_index: outputIndex,
      content_index: 0,
      part: { ...part, text: reply.text },
    });
    emit('response.output_item.done', {
      output_index: outputIndex,
      item: messageItem(reply, finalStatus(reply), reply.text),
    });
    outputIndex += 1;
  }
  const argumentChunks: number[] = [];
  for (const [index, call] of (reply.toolCalls ?? []).entries()) {
    const itemId = callItemId(index);
    emit('response.output_item.added', { output_index: outputIndex, item: callItem(call, index, 'in_progress', '') });
    const pieces = fragments(call.arguments, ARGUMENT_PIECE);
    for (const piece of pieces) {
      emit('response.function_call_arguments.delta', { item_id: itemId, output_index: outputIndex, delta: piece });
    }
    argumentChunks.push(pieces.length);
    emit('response.function_call_arguments.done', {
      item_id: itemId,
      output_index: outputIndex,
      arguments: call.arguments,
    });
    emit('response.output_item.done', {
      output_index: outputIndex,
      item: callItem(call, index, 'completed', call.arguments),
    });
    outputIndex += 1;
  }
  const status = finalStatus(reply);
  emit(`response.${status}`, {
    response: responseObject(reply, status, responsesOutput(reply), responsesUsage(reply.usage)),
  });
  return { contentType: 'text/event-stream; charset=utf-8', body: sse(events), events, argumentChunks };
}

// ---------------------------------------------------------------- Anthropic Messages

function anthropicStopReason(finish: ScriptedReply['finish']): string {
  return finish === 'tool-calls' ? 'tool_use' : finish === 'length' ? 'max_tokens' : 'end_turn';
}

function anthropicUsage(usage: ScriptedUsage, output: number): Record<string, unknown> {
  return {
    input_tokens: usage.input - usage.cacheRead - usage.cacheWrite,
    cache_creation_input_tokens: usage.cacheWrite,
    cache_read_input_tokens: usage.cacheRead,
    cache_creation: { ephemeral_5m_input_tokens: usage.cacheWrite, ephemeral_1h_input_tokens: 0 },
    output_tokens: output,
    service_tier: 'standard',
  };
}

const ANTHROPIC_MESSAGE_ID = 'msg_01MatrixScriptedAnswer';

export function anthropicJson(reply: ScriptedReply): ScriptedAnswer {
  const content: unknown[] = [];
  if (reply.text !== '') {
    content.push({ type: 'text', text: reply.text });
  }
  for (const call of reply.toolCalls ?? []) {
    content.push({ type: 'tool_use', id: call.id, name: call.name, input: JSON.parse(call.arguments) as unknown });
  }
  const body = {
    id: ANTHROPIC_MESSAGE_ID,
    type: 'message',
    role: 'assistant',
    model: reply.model,
    content,
    stop_reason: anthropicStopReason(reply.finish),
    stop_sequence: null,
    usage: anthropicUsage(reply.usage, reply.usage.output),
  };
  return {
    contentType: 'application/json',
    body: JSON.stringify(body),
    argumentChunks: (reply.toolCalls ?? []).map(() => 1),
  };
}

export function anthropicSse(reply: ScriptedReply): ScriptedAnswer {
  const events: Array<{ event: string; data: string }> = [];
  const emit = (type: string, fields: Record<string, unknown>) =>
    events.push({ event: type, data: JSON.stringify({ type, ...fields }) });
  emit('message_start', {
    message: {
      model: reply.model,
      id: ANTHROPIC_MESSAGE_ID,
      type: 'message',
      role: 'assistant',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: anthropicUsage(reply.usage, 1),
    },
  });
  let index = 0;
  if (reply.text !== '') {
    emit('content_block_start', { index, content_block: { type: 'text', text: '' } });
    emit('ping', {});
    for (const piece of fragments(reply.text, TEXT_PIECE)) {
      emit('content_block_delta', { index, delta: { type: 'text_delta', text: piece } });
    }
    emit('content_block_stop', { index });
    index += 1;
  }
  const argumentChunks: number[] = [];
  for (const call of reply.toolCalls ?? []) {
    emit('content_block_start', {
      index,
      content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} },
    });
    emit('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: '' } });
    const pieces = fragments(call.arguments, ARGUMENT_PIECE);
    for (const piece of pieces) {
      emit('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: piece } });
    }
    argumentChunks.push(pieces.length);
    emit('content_block_stop', { index });
    index += 1;
  }
  const full = anthropicUsage(reply.usage, reply.usage.output);
  const deltaUsage = reply.usage.outputOnlyInDelta
    ? { output_tokens: reply.usage.output }
    : {
        input_tokens: full.input_tokens,
        cache_creation_input_tokens: full.cache_creation_input_tokens,
        cache_read_input_tokens: full.cache_read_input_tokens,
        output_tokens: reply.usage.output,
      };
  emit('message_delta', {
    delta: { stop_reason: anthropicStopReason(reply.finish), stop_sequence: null },
    usage: deltaUsage,
  });
  emit('message_stop', {});
  return { contentType: 'text/event-stream; charset=utf-8', body: sse(events), events, argumentChunks };
}

/** Writes an answer the way a real server would: headers, then the body in small writes (boundaries anywhere). */
export async function writeAnswer(
  res: ServerResponse,
  answer: ScriptedAnswer,
  extraHeaders: Record<string, string> = {},
): Promise<void> {
  res.writeHead(200, { 'content-type': answer.contentType, 'cache-control': 'no-cache', ...extraHeaders });
  const bytes = Buffer.from(answer.body, 'utf8');
  const size = answer.events ? 61 : bytes.length;
  for (let at = 0; at < bytes.length; at += size) {
    res.write(bytes.subarray(at, at + size));
    if (answer.events) {
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  res.end();
}
