/**
 * Conformance: the OFFICIAL `openai` SDK (6.49.0) against a real Omnigate server on an ephemeral port,
 * using the built-in deterministic `local:chat` model (see server/providers/local/reference-reply.ts).
 * Covers models, chat completions (JSON, stream, tool loop, streamed tool calls, SDK stream helper),
 * error classes, and the Responses API (JSON, stream, helper, previous_response_id chains, store, ownership).
 */
import OpenAI, { type APIError } from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { FunctionTool, ResponseFunctionToolCall, ResponseStreamEvent } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type StartedServer } from './start-server.js';

const MODEL = 'local:chat';
const WEATHER_ARGS = { city: 'Paris' };
const CALL_TEXT = `call get_weather ${JSON.stringify(WEATHER_ARGS)}`;
const TOOL_OUTPUT = '{"temp_c":21}';
const TOOL_REPORT = `Tool get_weather returned: ${TOOL_OUTPUT}`;

const chatTools: ChatCompletionTool[] = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Current weather for a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  },
];

const responseTools: FunctionTool[] = [
  {
    type: 'function',
    name: 'get_weather',
    description: 'Current weather for a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    strict: false,
  },
];

let started: StartedServer;
let client: OpenAI;

beforeAll(async () => {
  started = await startServer();
  client = new OpenAI({ apiKey: started.key, baseURL: `${started.baseURL}/v1`, maxRetries: 0 });
});

afterAll(async () => {
  await started?.close();
});

/** Asserts the promise rejects with an instance of `errorClass` and returns the error. */
async function expectApiError<E extends APIError>(
  promise: Promise<unknown>,
  errorClass: abstract new (...args: never[]) => E,
): Promise<E> {
  let caught: unknown;
  try {
    await promise;
  } catch (error) {
    caught = error;
  }
  expect(caught, 'expected the call to throw').toBeInstanceOf(errorClass);
  return caught as E;
}

describe('models', () => {
  it('models.list() contains local:chat', async () => {
    const ids: string[] = [];
    for await (const model of client.models.list()) {
      ids.push(model.id);
    }
    expect(ids).toContain(MODEL);
    const local = (await client.models.list()).data.find((model) => model.id === MODEL);
    expect(local?.object).toBe('model');
  });
});

describe('chat.completions', () => {
  it('JSON: exact content, consistent usage, request id equals x-svc-request-id', async () => {
    const { data, response, request_id } = await client.chat.completions
      .create({ model: MODEL, messages: [{ role: 'user', content: 'Hello there' }] })
      .withResponse();
    expect(data.object).toBe('chat.completion');
    expect(data.model).toBe(MODEL);
    expect(data.id).toMatch(/^chatcmpl-/);
    expect(data.choices).toHaveLength(1);
    expect(data.choices[0].index).toBe(0);
    expect(data.choices[0].message.role).toBe('assistant');
    expect(data.choices[0].message.content).toBe('You said: Hello there');
    expect(data.choices[0].finish_reason).toBe('stop');
    const usage = data.usage!;
    expect(usage.prompt_tokens).toBeGreaterThan(0);
    expect(usage.completion_tokens).toBeGreaterThan(0);
    expect(usage.prompt_tokens + usage.completion_tokens).toBe(usage.total_tokens);

    const svcId = response.headers.get('x-svc-request-id');
    expect(svcId).toMatch(/^req_/);
    expect(request_id).toBe(svcId);
    // The awaited value carries the same id as `_request_id`.
    expect((data as typeof data & { _request_id?: string | null })._request_id).toBe(svcId);

    const awaited = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Hello there' }],
    });
    expect(awaited._request_id).toMatch(/^req_/);
    expect(awaited._request_id).not.toBe(svcId);
  });

  it('stream with include_usage: deltas concatenate to the JSON content; last chunk has usage and no choices', async () => {
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'Stream this, please' }];
    const whole = await client.chat.completions.create({ model: MODEL, messages });
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) {
      chunks.push(chunk);
    }
    expect(chunks.length).toBeGreaterThan(2);
    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe(whole.choices[0].message.content);
    expect(text).toBe('You said: Stream this, please');

    const ids = new Set(chunks.map((chunk) => chunk.id));
    expect(ids.size).toBe(1);
    for (const chunk of chunks) {
      expect(chunk.object).toBe('chat.completion.chunk');
      expect(chunk.model).toBe(MODEL);
    }
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    const finishes = chunks
      .flatMap((chunk) => chunk.choices.map((choice) => choice.finish_reason))
      .filter((reason) => reason !== null && reason !== undefined);
    expect(finishes).toEqual(['stop']);

    const last = chunks[chunks.length - 1];
    expect(last.choices).toEqual([]);
    expect(last.usage).toBeTruthy();
    expect(last.usage!.prompt_tokens).toBeGreaterThan(0);
    expect(last.usage!.completion_tokens).toBeGreaterThan(0);
    expect(last.usage!.prompt_tokens + last.usage!.completion_tokens).toBe(last.usage!.total_tokens);
    // Only the last chunk carries usage.
    expect(chunks.slice(0, -1).every((chunk) => chunk.usage === null || chunk.usage === undefined)).toBe(true);
    // The same conversation costs the same prompt tokens either way.
    expect(last.usage!.prompt_tokens).toBe(whole.usage!.prompt_tokens);
    expect(last.usage!.completion_tokens).toBe(whole.usage!.completion_tokens);
  });

  it('stream without include_usage: no chunk carries usage', async () => {
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'no usage' }],
      stream: true,
    });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) {
      chunks.push(chunk);
    }
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe('You said: no usage');
    expect(chunks.every((chunk) => chunk.usage === null || chunk.usage === undefined)).toBe(true);
  });

  it('full tool loop: tool call, tool result, final answer', async () => {
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: CALL_TEXT }];
    const first = await client.chat.completions.create({ model: MODEL, messages, tools: chatTools });
    const choice = first.choices[0];
    expect(choice.finish_reason).toBe('tool_calls');
    const calls = choice.message.tool_calls!;
    expect(calls).toHaveLength(1);
    const call = calls[0];
    expect(call.type).toBe('function');
    if (call.type !== 'function') {
      throw new Error('expected a function tool call');
    }
    expect(call.id).toBeTruthy();
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual(WEATHER_ARGS);

    messages.push(choice.message, { role: 'tool', tool_call_id: call.id, content: TOOL_OUTPUT });
    const second = await client.chat.completions.create({ model: MODEL, messages, tools: chatTools });
    expect(second.choices[0].finish_reason).toBe('stop');
    expect(second.choices[0].message.content).toBe(TOOL_REPORT);
    expect(second.choices[0].message.tool_calls ?? []).toEqual([]);
  });

  it('streamed tool calls: deltas accumulated by index give the same call', async () => {
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: CALL_TEXT }],
      tools: chatTools,
      stream: true,
    });
    const assembled: Array<{ id?: string; type?: string; name: string; arguments: string }> = [];
    let finish: string | null = null;
    let content = '';
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      if (!choice) {
        continue;
      }
      content += choice.delta.content ?? '';
      for (const delta of choice.delta.tool_calls ?? []) {
        const slot = (assembled[delta.index] ??= { name: '', arguments: '' });
        if (delta.id) {
          slot.id = delta.id;
        }
        if (delta.type) {
          slot.type = delta.type;
        }
        slot.name += delta.function?.name ?? '';
        slot.arguments += delta.function?.arguments ?? '';
      }
      finish = choice.finish_reason ?? finish;
    }
    expect(content).toBe('');
    expect(finish).toBe('tool_calls');
    expect(assembled).toHaveLength(1);
    expect(assembled[0].id).toBeTruthy();
    expect(assembled[0].type).toBe('function');
    expect(assembled[0].name).toBe('get_weather');
    expect(JSON.parse(assembled[0].arguments)).toEqual(WEATHER_ARGS);
  });

  it('SDK chat.completions.stream() helper: finalChatCompletion() has the tool call, then the final text', async () => {
    const runner = client.chat.completions.stream({
      model: MODEL,
      messages: [{ role: 'user', content: CALL_TEXT }],
      tools: chatTools,
    });
    const argumentDeltas: string[] = [];
    runner.on('tool_calls.function.arguments.delta', (event) => argumentDeltas.push(event.arguments_delta));
    const final = await runner.finalChatCompletion();
    expect(final.choices[0].finish_reason).toBe('tool_calls');
    const call = final.choices[0].message.tool_calls![0];
    if (call.type !== 'function') {
      throw new Error('expected a function tool call');
    }
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual(WEATHER_ARGS);
    expect(call.function.parsed_arguments).toBeUndefined();
    expect(argumentDeltas.join('')).toBe(call.function.arguments);

    const textRunner = client.chat.completions.stream({
      model: MODEL,
      messages: [
        { role: 'user', content: CALL_TEXT },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: call.id, type: 'function', function: { name: 'get_weather', arguments: call.function.arguments } },
          ],
        },
        { role: 'tool', tool_call_id: call.id, content: TOOL_OUTPUT },
      ],
      tools: chatTools,
    });
    const textDeltas: string[] = [];
    textRunner.on('content.delta', (event) => textDeltas.push(event.delta));
    const finalText = await textRunner.finalChatCompletion();
    expect(finalText.choices[0].message.content).toBe(TOOL_REPORT);
    expect(textDeltas.join('')).toBe(TOOL_REPORT);
    expect(await textRunner.finalContent()).toBe(TOOL_REPORT);
  });
});

describe('errors map to the SDK error classes, each with a request id', () => {
  it('bad key → AuthenticationError 401', async () => {
    const bad = new OpenAI({ apiKey: 'sk-not-a-real-key', baseURL: `${started.baseURL}/v1`, maxRetries: 0 });
    const error = await expectApiError(
      bad.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }),
      OpenAI.AuthenticationError,
    );
    expect(error.status).toBe(401);
    expect(error.requestID).toMatch(/^req_/);
    expect(error.headers?.get('x-svc-request-id')).toBe(error.requestID);
    expect(error.type).toBe('authentication_error');
  });

  it('unknown model → NotFoundError 404 pointing at /v1/models', async () => {
    const error = await expectApiError(
      client.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }),
      OpenAI.NotFoundError,
    );
    expect(error.status).toBe(404);
    expect(error.message).toContain('/v1/models');
    expect(error.message).toContain('no-such-model');
    expect(error.param).toBe('model');
    expect(error.requestID).toMatch(/^req_/);
    expect(error.headers?.get('x-svc-request-id')).toBe(error.requestID);
  });

  it('malformed body (messages: "x") → BadRequestError 400', async () => {
    const error = await expectApiError(
      client.chat.completions.create({
        model: MODEL,
        messages: 'x',
      } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming),
      OpenAI.BadRequestError,
    );
    expect(error.status).toBe(400);
    expect(error.type).toBe('invalid_request_error');
    expect(error.param).toMatch(/^messages/);
    expect(error.requestID).toMatch(/^req_/);
  });

  it('n: 2 → BadRequestError 400', async () => {
    const error = await expectApiError(
      client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], n: 2 }),
      OpenAI.BadRequestError,
    );
    expect(error.status).toBe(400);
    expect(error.param).toBe('n');
    expect(error.requestID).toMatch(/^req_/);
  });

  it('streaming call with an unknown model fails before the stream with NotFoundError', async () => {
    const error = await expectApiError(
      client.chat.completions.create({
        model: 'no-such-model',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
      }),
      OpenAI.NotFoundError,
    );
    expect(error.requestID).toMatch(/^req_/);
  });
});

describe('responses', () => {
  it('responses.create JSON → output_text and request id', async () => {
    const { data, response, request_id } = await client.responses
      .create({ model: MODEL, input: 'Hello' })
      .withResponse();
    expect(data.object).toBe('response');
    expect(data.status).toBe('completed');
    expect(data.model).toBe(MODEL);
    expect(data.id).toMatch(/^resp_/);
    expect(data.output_text).toBe('You said: Hello');
    expect(data.usage!.input_tokens).toBeGreaterThan(0);
    expect(data.usage!.output_tokens).toBeGreaterThan(0);
    expect(data.usage!.input_tokens + data.usage!.output_tokens).toBe(data.usage!.total_tokens);
    expect(request_id).toBe(response.headers.get('x-svc-request-id'));
  });

  it('streaming: response.created … response.completed, increasing sequence numbers, same output_text', async () => {
    const stream = await client.responses.create({ model: MODEL, input: 'Hello', stream: true });
    const events: ResponseStreamEvent[] = [];
    for await (const event of stream) {
      events.push(event);
    }
    const types = events.map((event) => event.type);
    expect(types[0]).toBe('response.created');
    expect(types[types.length - 1]).toBe('response.completed');
    expect(types).toContain('response.output_text.delta');
    expect(types).toContain('response.output_text.done');
    expect(types).toContain('response.output_item.added');
    expect(types).toContain('response.output_item.done');
    const sequence = events.map((event) => event.sequence_number);
    for (let i = 1; i < sequence.length; i += 1) {
      expect(sequence[i]).toBeGreaterThan(sequence[i - 1]);
    }
    const deltas = events
      .flatMap((event) => (event.type === 'response.output_text.delta' ? [event.delta] : []))
      .join('');
    expect(deltas).toBe('You said: Hello');
    const completed = events[events.length - 1];
    if (completed.type !== 'response.completed') {
      throw new Error('expected response.completed last');
    }
    expect(completed.response.status).toBe('completed');
    // The SDK adds output_text on the objects it returns from create(); stream events carry raw objects.
    const streamedText = completed.response.output
      .flatMap((item) => (item.type === 'message' ? item.content : []))
      .map((part) => (part.type === 'output_text' ? part.text : ''))
      .join('');
    expect(streamedText).toBe('You said: Hello');
    // The server also sends the convenience field itself on the completed response.
    expect(completed.response.output_text).toBe('You said: Hello');
    const created = events[0];
    if (created.type !== 'response.created') {
      throw new Error('expected response.created first');
    }
    expect(created.response.id).toBe(completed.response.id);
    expect(completed.response.usage!.input_tokens + completed.response.usage!.output_tokens).toBe(
      completed.response.usage!.total_tokens,
    );
    // A streamed response is stored too.
    const retrieved = await client.responses.retrieve(completed.response.id);
    expect(retrieved.output_text).toBe('You said: Hello');
  });

  it('responses.stream() helper: finalResponse() and text deltas', async () => {
    const runner = client.responses.stream({ model: MODEL, input: 'Hello' });
    const deltas: string[] = [];
    runner.on('response.output_text.delta', (event) => deltas.push(event.delta));
    const final = await runner.finalResponse();
    expect(final.output_text).toBe('You said: Hello');
    expect(final.status).toBe('completed');
    expect(deltas.join('')).toBe('You said: Hello');
  });

  it('function-call round trip through previous_response_id, chained again, and retrieve', async () => {
    const first = await client.responses.create({ model: MODEL, input: CALL_TEXT, tools: responseTools });
    const calls = first.output.filter((item): item is ResponseFunctionToolCall => item.type === 'function_call');
    expect(calls).toHaveLength(1);
    const call = calls[0];
    expect(call.name).toBe('get_weather');
    expect(call.call_id).toBeTruthy();
    expect(JSON.parse(call.arguments)).toEqual(WEATHER_ARGS);
    expect(first.output_text).toBe('');

    const second = await client.responses.create({
      model: MODEL,
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: TOOL_OUTPUT }],
      tools: responseTools,
    });
    expect(second.output_text).toBe(TOOL_REPORT);
    expect(second.previous_response_id).toBe(first.id);

    const third = await client.responses.create({ model: MODEL, previous_response_id: second.id, input: 'Thanks' });
    expect(third.output_text).toBe('You said: Thanks');
    expect(third.previous_response_id).toBe(second.id);

    // And once more, four turns deep.
    const branch = await client.responses.create({ model: MODEL, previous_response_id: third.id, input: 'And again' });
    expect(branch.output_text).toBe('You said: And again');

    const retrieved = await client.responses.retrieve(second.id);
    expect(retrieved.id).toBe(second.id);
    expect(retrieved.output_text).toBe(TOOL_REPORT);
    expect(retrieved.status).toBe('completed');
  });

  it('streamed function call: output item is a function_call with the same arguments', async () => {
    const final = await client.responses
      .stream({ model: MODEL, input: CALL_TEXT, tools: responseTools })
      .finalResponse();
    const call = final.output.find((item) => item.type === 'function_call');
    expect(call?.name).toBe('get_weather');
    expect(JSON.parse(call!.arguments)).toEqual(WEATHER_ARGS);
    // The streamed response was stored and can be continued.
    const next = await client.responses.create({
      model: MODEL,
      previous_response_id: final.id,
      input: [{ type: 'function_call_output', call_id: call!.call_id, output: TOOL_OUTPUT }],
      tools: responseTools,
    });
    expect(next.output_text).toBe(TOOL_REPORT);
  });

  it('store: false → retrieve is NotFoundError, and previous_response_id to it is NotFoundError', async () => {
    const unstored = await client.responses.create({ model: MODEL, input: 'Hello', store: false });
    expect(unstored.output_text).toBe('You said: Hello');
    const error = await expectApiError(client.responses.retrieve(unstored.id), OpenAI.NotFoundError);
    expect(error.status).toBe(404);
    expect(error.requestID).toMatch(/^req_/);
    const chained = await expectApiError(
      client.responses.create({ model: MODEL, input: 'more', previous_response_id: unstored.id }),
      OpenAI.NotFoundError,
    );
    expect(chained.param).toBe('previous_response_id');
  });

  it("another key cannot see the first key's response", async () => {
    const mine = await client.responses.create({ model: MODEL, input: 'Private' });
    const { key: otherKey } = await started.testApp.keys.create({ name: 'other' });
    const other = new OpenAI({ apiKey: otherKey, baseURL: `${started.baseURL}/v1`, maxRetries: 0 });
    const error = await expectApiError(other.responses.retrieve(mine.id), OpenAI.NotFoundError);
    expect(error.status).toBe(404);
    expect(error.requestID).toMatch(/^req_/);
    await expectApiError(
      other.responses.create({ model: MODEL, input: 'x', previous_response_id: mine.id }),
      OpenAI.NotFoundError,
    );
    await expectApiError(other.responses.delete(mine.id), OpenAI.NotFoundError);
    // Still there for its owner; then deleted; then gone.
    expect((await client.responses.retrieve(mine.id)).output_text).toBe('You said: Private');
    await client.responses.delete(mine.id);
    await expectApiError(client.responses.retrieve(mine.id), OpenAI.NotFoundError);
  });
});

describe('server health after the run', () => {
  it('logged requests but no warnings or errors (nothing the SDK sent was dropped, no 5xx, no invalid responses)', () => {
    const logs = started.testApp.logs;
    expect(logs.length).toBeGreaterThan(0);
    const problems = logs.filter((line) => typeof line.level === 'number' && line.level >= 40);
    expect(problems).toEqual([]);
  });
});
