/**
 * POST /v1/chat/completions on the built-in reference model (local:chat): JSON and SSE answers, usage,
 * tools, limits, stop sequences, response formats, bodies as real clients send them, and validation.
 * Expected token counts come from the same o200k tokenizer the model uses, never from literals.
 */
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { countCallInputTokens, countTextTokens, splitIntoTokens } from '../../server/tokens/tokenizer.js';
import type { ChatCallOptions } from '../../server/core/chat.js';
import { expectOpenAIError, expectRequestId } from '../helpers/contract-assertions.js';
import { createTestApp } from '../helpers/create-test-app.js';
import { readSse } from '../helpers/read-sse.js';
import { assertMatchesSchema } from '../helpers/spec-schemas.js';

const T0 = 1_767_225_600_000;

const WEATHER_TOOL = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather for a city.',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
    },
  },
} as const;
const TIME_TOOL = {
  type: 'function',
  function: {
    name: 'get_time',
    description: 'Local time in a city.',
    parameters: { type: 'object', properties: { city: { type: 'string' } } },
  },
} as const;

/** The canonical tools the two wire tools above decode to, for counting prompt tokens. */
const CANONICAL_TOOLS: NonNullable<ChatCallOptions['tools']> = [WEATHER_TOOL, TIME_TOOL].map((tool) => ({
  name: tool.function.name,
  description: tool.function.description,
  parameters: tool.function.parameters as Record<string, unknown>,
}));

/** Prompt tokens of a one-user-message chat: 3 to prime the reply, 3 for the message, its role and text. */
async function promptTokens(text: string): Promise<number> {
  return 3 + 3 + (await countTextTokens('user')) + (await countTextTokens(text));
}

function userChat(text: string, extra: Record<string, unknown> = {}) {
  return { model: 'local:chat', messages: [{ role: 'user', content: text }], ...extra };
}

interface Chunk {
  id: string;
  object: string;
  created: number;
  model: string;
  choices: Array<{
    index: number;
    delta: {
      role?: string;
      content?: string | null;
      reasoning_content?: string | null;
      tool_calls?: Array<{
        index: number;
        id?: string;
        type?: string;
        function?: { name?: string; arguments?: string };
      }>;
    };
    finish_reason: string | null;
  }>;
  usage?: unknown;
}

/** Checks the frame grammar of a chat stream and every frame's data against the spec; returns the chunks. */
function chunksOf(text: string): Chunk[] {
  const events = readSse(text);
  expect(events.length).toBeGreaterThan(1);
  expect(events.at(-1)).toEqual({ event: undefined, data: '[DONE]' });
  expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
  const chunks = events.slice(0, -1).map((event) => {
    expect(event.event).toBeUndefined();
    const data = JSON.parse(event.data) as unknown;
    assertMatchesSchema('ChatCompletionChunk', data);
    return data as Chunk;
  });
  expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
  expect(new Set(chunks.map((chunk) => chunk.created)).size).toBe(1);
  expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '' });
  return chunks;
}

function streamedText(chunks: Chunk[]): string {
  return chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
}

async function post(body: Record<string, unknown>, options: { now?: () => number } = {}) {
  const { app, key, logs } = await createTestApp(options);
  const res = await request(app).post('/v1/chat/completions').set('authorization', `Bearer ${key}`).send(body);
  return { res, logs };
}

describe('JSON answers', () => {
  it('echoes the last user message with exact usage', async () => {
    const text = 'What is the capital of France?';
    const { res } = await post(userChat(text), { now: () => T0 });
    expect(res.status).toBe(200);
    expectRequestId(res);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const reply = `You said: ${text}`;
    const completion = (await splitIntoTokens(reply)).length;
    expect(completion).toBe(await countTextTokens(reply));
    expect(res.body).toEqual({
      id: expect.stringMatching(/^chatcmpl-[0-9a-f]{32}$/),
      object: 'chat.completion',
      created: T0 / 1000,
      model: 'local:chat',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: reply, refusal: null },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
      usage: {
        prompt_tokens: await promptTokens(text),
        completion_tokens: completion,
        total_tokens: (await promptTokens(text)) + completion,
        completion_tokens_details: { reasoning_tokens: 0 },
      },
      system_fingerprint: null,
    });
  });

  it('counts every message of the conversation, system and developer included, in prompt_tokens', async () => {
    const messages = [
      { role: 'system', content: 'Be terse.' },
      { role: 'developer', content: 'Answer in English.' },
      { role: 'user', content: 'First question' },
      { role: 'assistant', content: 'First answer' },
      { role: 'user', content: [{ type: 'text', text: 'Second question' }] },
    ];
    const { res } = await post({ model: 'local:chat', messages });
    expect(res.status).toBe(200);
    expectRequestId(res);
    expect(res.body.choices[0].message.content).toBe('You said: Second question');
    const expected = await countCallInputTokens({
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'Be terse.' }] },
        { role: 'system', content: [{ type: 'text', text: 'Answer in English.' }] },
        { role: 'user', content: [{ type: 'text', text: 'First question' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'First answer' }] },
        { role: 'user', content: [{ type: 'text', text: 'Second question' }] },
      ],
    });
    expect(expected).toBe(
      3 +
        5 * 3 +
        (await countTextTokens('system')) * 2 +
        (await countTextTokens('user')) * 2 +
        (await countTextTokens('assistant')) +
        (await countTextTokens('Be terse.')) +
        (await countTextTokens('Answer in English.')) +
        (await countTextTokens('First question')) +
        (await countTextTokens('First answer')) +
        (await countTextTokens('Second question')),
    );
    expect(res.body.usage.prompt_tokens).toBe(expected);
  });

  it('greets when the conversation has no user text', async () => {
    const { res } = await post({ model: 'local:chat', messages: [{ role: 'system', content: 'You are a test.' }] });
    expect(res.status).toBe(200);
    expectRequestId(res);
    expect(res.body.choices[0].message.content).toBe('Hello! I am the Omnigate reference model.');
  });

  it('returns reasoning_content and counts reasoning tokens when reasoning_effort is set', async () => {
    const text = 'Think first.';
    const { res } = await post(userChat(text, { reasoning_effort: 'low' }));
    expect(res.status).toBe(200);
    expectRequestId(res);
    const reasoning = 'The reference model reads the last message and answers deterministically.';
    const reasoningTokens = (await splitIntoTokens(reasoning)).length;
    const answerTokens = (await splitIntoTokens(`You said: ${text}`)).length;
    expect(res.body.choices[0].message).toEqual({
      role: 'assistant',
      content: `You said: ${text}`,
      refusal: null,
      reasoning_content: reasoning,
    });
    expect(res.body.usage).toEqual({
      prompt_tokens: await promptTokens(text),
      completion_tokens: answerTokens + reasoningTokens,
      total_tokens: (await promptTokens(text)) + answerTokens + reasoningTokens,
      completion_tokens_details: { reasoning_tokens: reasoningTokens },
    });
  });
});

describe('streamed answers', () => {
  it('streams spec-valid chunks whose deltas add up to the JSON answer, ending with [DONE]', async () => {
    const text = 'Tell me something, anything.';
    const { res: json } = await post(userChat(text));
    const { res } = await post(userChat(text, { stream: true }));
    expect(res.status).toBe(200);
    expectRequestId(res);
    expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-cache');
    const chunks = chunksOf(res.text);
    expect(streamedText(chunks)).toBe(json.body.choices[0].message.content);
    // One content chunk per token, between the role chunk and the finish chunk.
    expect(chunks).toHaveLength((await splitIntoTokens(`You said: ${text}`)).length + 2);
    expect(chunks.every((chunk) => !('usage' in chunk) && chunk.model === 'local:chat')).toBe(true);
    expect(chunks.at(-1)?.choices).toEqual([{ index: 0, delta: {}, finish_reason: 'stop', logprobs: null }]);
    expect(chunks.slice(0, -1).every((chunk) => chunk.choices[0].finish_reason === null)).toBe(true);
  });

  it('sends usage: null on every chunk and a final choices: [] chunk with the usage before [DONE] when include_usage is set', async () => {
    const text = 'Count this stream.';
    const { res: json } = await post(userChat(text));
    const { res } = await post(userChat(text, { stream: true, stream_options: { include_usage: true } }));
    expect(res.status).toBe(200);
    expectRequestId(res);
    const chunks = chunksOf(res.text);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual(json.body.usage);
    expect(last.usage).toEqual({
      prompt_tokens: await promptTokens(text),
      completion_tokens: (await splitIntoTokens(`You said: ${text}`)).length,
      total_tokens: (await promptTokens(text)) + (await splitIntoTokens(`You said: ${text}`)).length,
      completion_tokens_details: { reasoning_tokens: 0 },
    });
    expect(chunks.slice(0, -1).every((chunk) => chunk.usage === null)).toBe(true);
    expect(chunks.at(-2)?.choices[0].finish_reason).toBe('stop');
    expect(streamedText(chunks)).toBe(`You said: ${text}`);
  });

  it('sends no usage chunk when include_usage is false', async () => {
    const { res } = await post(userChat('hi', { stream: true, stream_options: { include_usage: false } }));
    expect(res.status).toBe(200);
    expectRequestId(res);
    const chunks = chunksOf(res.text);
    expect(chunks.every((chunk) => chunk.choices.length === 1 && !('usage' in chunk))).toBe(true);
  });

  it('streams reasoning as reasoning_content deltas before the text', async () => {
    const { res } = await post(userChat('Reason, then answer.', { stream: true, reasoning_effort: 'high' }));
    expect(res.status).toBe(200);
    expectRequestId(res);
    const chunks = chunksOf(res.text);
    const reasoning = chunks.map((chunk) => chunk.choices[0]?.delta.reasoning_content ?? '').join('');
    expect(reasoning).toBe('The reference model reads the last message and answers deterministically.');
    const firstText = chunks.findIndex((chunk) => chunk.choices[0]?.delta.content);
    const lastReasoning = chunks.findLastIndex((chunk) => chunk.choices[0]?.delta.reasoning_content);
    expect(lastReasoning).toBeLessThan(firstText);
    expect(streamedText(chunks)).toBe('You said: Reason, then answer.');
  });
});

describe('tools', () => {
  it('calls the tool the user names, with exact arguments, content null and finish_reason tool_calls', async () => {
    const text = 'call get_weather {"city": "Paris"}';
    const { res } = await post(userChat(text, { tools: [WEATHER_TOOL, TIME_TOOL] }));
    expect(res.status).toBe(200);
    const requestId = expectRequestId(res);
    const args = '{"city":"Paris"}';
    expect(res.body.choices).toEqual([
      {
        index: 0,
        message: {
          role: 'assistant',
          content: null,
          refusal: null,
          tool_calls: [
            {
              id: `call_${requestId.slice(-12)}0`,
              type: 'function',
              function: { name: 'get_weather', arguments: args },
            },
          ],
        },
        finish_reason: 'tool_calls',
        logprobs: null,
      },
    ]);
    const prompt = await countCallInputTokens({
      messages: [{ role: 'user', content: [{ type: 'text', text }] }],
      tools: CANONICAL_TOOLS,
    });
    const completion = (await countTextTokens('get_weather')) + (await countTextTokens(args));
    expect(res.body.usage).toEqual({
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
      completion_tokens_details: { reasoning_tokens: 0 },
    });
  });

  it('completes the tool loop: the tool result comes back as "Tool <name> returned: <output>"', async () => {
    const { app, key } = await createTestApp();
    const auth = { authorization: `Bearer ${key}` };
    const question = { role: 'user', content: 'call get_weather {"city":"Paris"}' };
    const first = await request(app)
      .post('/v1/chat/completions')
      .set(auth)
      .send({ model: 'local:chat', messages: [question], tools: [WEATHER_TOOL] });
    expect(first.status).toBe(200);
    expectRequestId(first);
    const assistant = first.body.choices[0].message;
    const call = assistant.tool_calls[0];
    const output = '{"temperature_c":18,"condition":"cloudy"}';
    const second = await request(app)
      .post('/v1/chat/completions')
      .set(auth)
      .send({
        model: 'local:chat',
        tools: [WEATHER_TOOL],
        messages: [question, assistant, { role: 'tool', tool_call_id: call.id, content: output }],
      });
    expect(second.status).toBe(200);
    expectRequestId(second);
    expect(second.body.choices[0]).toEqual({
      index: 0,
      message: { role: 'assistant', content: `Tool get_weather returned: ${output}`, refusal: null },
      finish_reason: 'stop',
      logprobs: null,
    });
  });

  it('answers in text with tool_choice none even when the user names a tool', async () => {
    const text = 'call get_weather {"city":"Paris"}';
    const { res } = await post(userChat(text, { tools: [WEATHER_TOOL], tool_choice: 'none' }));
    expect(res.status).toBe(200);
    expectRequestId(res);
    expect(res.body.choices[0].message).toEqual({ role: 'assistant', content: `You said: ${text}`, refusal: null });
    expect(res.body.choices[0].finish_reason).toBe('stop');
  });

  it('answers in text with tool_choice auto when the user names no tool', async () => {
    const { res } = await post(userChat('Just chatting.', { tools: [WEATHER_TOOL], tool_choice: 'auto' }));
    expect(res.status).toBe(200);
    expectRequestId(res);
    expect(res.body.choices[0].message).toEqual({
      role: 'assistant',
      content: 'You said: Just chatting.',
      refusal: null,
    });
  });

  it('forces a call of the first tool with tool_choice required, taking arguments from the message', async () => {
    const { res } = await post(
      userChat('Weather for {"city":"Oslo"} please', { tools: [WEATHER_TOOL, TIME_TOOL], tool_choice: 'required' }),
    );
    expect(res.status).toBe(200);
    expectRequestId(res);
    expect(res.body.choices[0].finish_reason).toBe('tool_calls');
    expect(res.body.choices[0].message.content).toBeNull();
    expect(res.body.choices[0].message.tool_calls.map((call: { function: unknown }) => call.function)).toEqual([
      { name: 'get_weather', arguments: '{"city":"Oslo"}' },
    ]);
  });

  it('calls the named tool with a named tool_choice, with {} when the message has no arguments', async () => {
    const { res } = await post(
      userChat('What time is it?', {
        tools: [WEATHER_TOOL, TIME_TOOL],
        tool_choice: { type: 'function', function: { name: 'get_time' } },
      }),
    );
    expect(res.status).toBe(200);
    expectRequestId(res);
    expect(res.body.choices[0].finish_reason).toBe('tool_calls');
    expect(res.body.choices[0].message.tool_calls.map((call: { function: unknown }) => call.function)).toEqual([
      { name: 'get_time', arguments: '{}' },
    ]);
  });

  it('streams a tool call: the first fragment names it, the argument fragments concatenate to the exact JSON', async () => {
    const { res } = await post(
      userChat('call get_weather {"city":"Paris","unit":"celsius"}', { stream: true, tools: [WEATHER_TOOL] }),
    );
    expect(res.status).toBe(200);
    const requestId = expectRequestId(res);
    const chunks = chunksOf(res.text);
    const fragments = chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []);
    expect(fragments[0]).toEqual({
      index: 0,
      id: `call_${requestId.slice(-12)}0`,
      type: 'function',
      function: { name: 'get_weather', arguments: '' },
    });
    expect(
      fragments.slice(1).every((fragment) => Object.keys(fragment).join() === 'index,function' && fragment.index === 0),
    ).toBe(true);
    expect(fragments.map((fragment) => fragment.function?.arguments ?? '').join('')).toBe(
      '{"city":"Paris","unit":"celsius"}',
    );
    expect(fragments.length).toBe(1 + (await splitIntoTokens('{"city":"Paris","unit":"celsius"}')).length);
    expect(streamedText(chunks)).toBe('');
    expect(chunks.at(-1)?.choices[0].finish_reason).toBe('tool_calls');
  });
});

describe('generation controls', () => {
  it('answers 400 param n for n greater than 1, and accepts n: 1', async () => {
    const { res } = await post(userChat('hi', { n: 2 }));
    expect(res.status).toBe(400);
    expectRequestId(res);
    expectOpenAIError(res.body, {
      message: 'Only one choice per request is supported; set n to 1 or leave it out.',
      type: 'invalid_request_error',
      param: 'n',
      code: null,
    });
    const { res: one } = await post(userChat('hi', { n: 1 }));
    expect(one.status).toBe(200);
    expectRequestId(one);
  });

  it.each([['max_tokens'], ['max_completion_tokens']])(
    'stops at exactly %s tokens with finish_reason length',
    async (field) => {
      const text = 'Please repeat this fairly long sentence back to me.';
      const { res } = await post(userChat(text, { [field]: 4 }));
      expect(res.status).toBe(200);
      expectRequestId(res);
      expect(res.body.choices[0].finish_reason).toBe('length');
      expect(res.body.choices[0].message.content).toBe(
        (await splitIntoTokens(`You said: ${text}`)).slice(0, 4).join(''),
      );
      expect(res.body.usage.completion_tokens).toBe(4);
      expect(res.body.usage.total_tokens).toBe((await promptTokens(text)) + 4);
    },
  );

  it('lets max_completion_tokens win over max_tokens', async () => {
    const text = 'One two three four five six seven.';
    const { res } = await post(userChat(text, { max_tokens: 2, max_completion_tokens: 5 }));
    expect(res.status).toBe(200);
    expectRequestId(res);
    expect(res.body.usage.completion_tokens).toBe(5);
    expect(res.body.choices[0].finish_reason).toBe('length');
  });

  it('ends a stream at the token limit with finish_reason length', async () => {
    const text = 'Please repeat this fairly long sentence back to me.';
    const { res } = await post(
      userChat(text, { stream: true, max_tokens: 3, stream_options: { include_usage: true } }),
    );
    expect(res.status).toBe(200);
    expectRequestId(res);
    const chunks = chunksOf(res.text);
    expect(streamedText(chunks)).toBe((await splitIntoTokens(`You said: ${text}`)).slice(0, 3).join(''));
    expect(chunks.at(-2)?.choices[0].finish_reason).toBe('length');
    expect((chunks.at(-1)?.usage as { completion_tokens: number }).completion_tokens).toBe(3);
  });

  it.each([
    ['a string', 'there'],
    ['an array', ['nothing-matches', 'there']],
  ])('cuts the answer before the stop sequence given as %s', async (_kind, stop) => {
    const text = 'Hello there, friend';
    const { res } = await post(userChat(text, { stop }));
    expect(res.status).toBe(200);
    expectRequestId(res);
    expect(res.body.choices[0].message.content).toBe('You said: Hello ');
    expect(res.body.choices[0].finish_reason).toBe('stop');
    expect(res.body.usage.completion_tokens).toBe((await splitIntoTokens('You said: Hello ')).length);
  });

  it('answers valid JSON with response_format json_object', async () => {
    const { res } = await post(userChat('Give me JSON.', { response_format: { type: 'json_object' } }));
    expect(res.status).toBe(200);
    expectRequestId(res);
    expect(JSON.parse(res.body.choices[0].message.content)).toEqual({ reply: 'You said: Give me JSON.' });
  });

  it('answers valid JSON with response_format json_schema', async () => {
    const { res } = await post(
      userChat('Give me JSON.', {
        response_format: {
          type: 'json_schema',
          json_schema: {
            name: 'reply',
            strict: true,
            schema: {
              type: 'object',
              properties: { reply: { type: 'string' } },
              required: ['reply'],
              additionalProperties: false,
            },
          },
        },
      }),
    );
    expect(res.status).toBe(200);
    expectRequestId(res);
    expect(JSON.parse(res.body.choices[0].message.content)).toEqual({ reply: 'You said: Give me JSON.' });
  });

  it('accepts temperature and top_p, logging that the deterministic model does not honour temperature', async () => {
    const { res, logs } = await post(
      userChat('Be creative.', { temperature: 0.7, top_p: 0.9, seed: 7, user: 'end-user-1' }),
    );
    expect(res.status).toBe(200);
    const requestId = expectRequestId(res);
    expect(res.body.choices[0].message.content).toBe('You said: Be creative.');
    const warnings = logs.filter((line) => line.level === 40 && line.requestId === requestId);
    expect(warnings.map((line) => [line.field, line.msg])).toEqual([
      ['temperature', 'accepted but not honoured: temperature (the reference model is deterministic)'],
    ]);
  });
});

describe('bodies as real clients send them', () => {
  it('accepts an AI SDK style body: draft-07 tool schema, a content-null assistant turn and a tool result', async () => {
    const body = {
      model: 'local-chat',
      max_tokens: 256,
      temperature: 0,
      messages: [
        { role: 'system', content: 'You are a helpful assistant.' },
        { role: 'user', content: 'What is the weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_abc123', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_abc123', content: '{"temperature":21}' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Get the weather in a city',
            parameters: {
              $schema: 'http://json-schema.org/draft-07/schema#',
              type: 'object',
              properties: { city: { type: 'string' } },
              required: ['city'],
              additionalProperties: false,
            },
          },
        },
      ],
      tool_choice: 'auto',
    };
    const { res } = await post(body);
    expect(res.status).toBe(200);
    expectRequestId(res);
    expect(res.body.model).toBe('local:chat');
    expect(res.body.choices[0].message.content).toBe('Tool get_weather returned: {"temperature":21}');
  });

  it('accepts a LangChain style body: 2020-12 tool schema, stream: false, n: 1', async () => {
    const body = {
      model: 'reference',
      temperature: 1,
      stream: false,
      n: 1,
      messages: [{ role: 'user', content: 'call get_weather {"city":"Lyon"}' }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Get the weather in a city',
            parameters: {
              $schema: 'https://json-schema.org/draft/2020-12/schema',
              type: 'object',
              properties: { city: { type: 'string', description: 'The city' } },
              required: ['city'],
              additionalProperties: false,
            },
          },
        },
      ],
    };
    const { res } = await post(body);
    expect(res.status).toBe(200);
    expectRequestId(res);
    expect(res.body.choices[0].finish_reason).toBe('tool_calls');
    expect(res.body.choices[0].message.tool_calls[0].function).toEqual({
      name: 'get_weather',
      arguments: '{"city":"Lyon"}',
    });
  });

  it('accepts fields it cannot honour (logprobs, metadata, store, unknown vendor fields)', async () => {
    const { res } = await post(
      userChat('hi', { logprobs: false, metadata: { run: '1' }, store: false, frequency_penalty: 0, min_p: 0.1 }),
    );
    expect(res.status).toBe(200);
    expectRequestId(res);
    expect(res.body.choices[0].message.content).toBe('You said: hi');
  });
});

describe('validation', () => {
  it.each([
    [
      'temperature is a string',
      userChat('hi', { temperature: 'hot' }),
      'temperature',
      '/body/temperature must be number,null',
    ],
    ['temperature is above 2', userChat('hi', { temperature: 3 }), 'temperature', '/body/temperature must be <= 2'],
    ['messages is not an array', { model: 'local:chat', messages: 'hi' }, 'messages', '/body/messages must be array'],
    [
      'messages is empty',
      { model: 'local:chat', messages: [] },
      'messages',
      '/body/messages must NOT have fewer than 1 items',
    ],
    ['max_tokens is 0', userChat('hi', { max_tokens: 0 }), 'max_tokens', '/body/max_tokens must be >= 1'],
    [
      'model is missing',
      { messages: [{ role: 'user', content: 'hi' }] },
      'model',
      "/body/model must have required property 'model'",
    ],
  ])('answers 400 naming the field when %s', async (_case, body, param, message) => {
    const { res } = await post(body as Record<string, unknown>);
    expect(res.status).toBe(400);
    expectRequestId(res);
    expectOpenAIError(res.body, { message, type: 'invalid_request_error', param, code: null });
  });
});
