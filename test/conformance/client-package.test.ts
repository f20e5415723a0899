/**
 * Conformance: the project's own client package (client/index.ts: createClient + helpers + OmnigateError)
 * against a real Omnigate server on an ephemeral port, with the built-in deterministic `local:chat` model.
 * Mirrors the SDK cases in openai-chat.test.ts so both clients are held to the same answers.
 */
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createClient,
  embeddingVectors,
  OmnigateError,
  type ChatCompletionChunk,
  type OmnigateClient,
  type ResponseStreamEvent,
} from '../../client/index.js';
import { startServer, type StartedServer } from './start-server.js';

const MODEL = 'local:chat';
const CALL_TEXT = 'call get_weather {"city":"Paris"}';
const TOOL_OUTPUT = '{"temp_c":21}';
const TOOL_REPORT = `Tool get_weather returned: ${TOOL_OUTPUT}`;
const weatherParameters = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };

let started: StartedServer;
let omnigate: OmnigateClient;

beforeAll(async () => {
  started = await startServer();
  omnigate = createClient({ baseUrl: started.baseURL, apiKey: started.key });
});

afterAll(async () => {
  await started?.close();
});

async function expectOmnigateError(promise: Promise<unknown>): Promise<OmnigateError> {
  let caught: unknown;
  try {
    await promise;
  } catch (error) {
    caught = error;
  }
  expect(caught, 'expected the call to throw').toBeInstanceOf(OmnigateError);
  return caught as OmnigateError;
}

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) {
    items.push(item);
  }
  return items;
}

describe('client package: chat completions', () => {
  it('createChatCompletion: exact content and consistent usage', async () => {
    const completion = await omnigate.createChatCompletion({
      model: MODEL,
      messages: [{ role: 'user', content: 'Hello there' }],
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.model).toBe(MODEL);
    expect(completion.choices[0].message.content).toBe('You said: Hello there');
    expect(completion.choices[0].finish_reason).toBe('stop');
    const usage = completion.usage!;
    expect(usage.prompt_tokens).toBeGreaterThan(0);
    expect(usage.completion_tokens).toBeGreaterThan(0);
    expect(usage.prompt_tokens + usage.completion_tokens).toBe(usage.total_tokens);
  });

  it('streamChatCompletion with include_usage: deltas equal the JSON content, usage chunk last', async () => {
    const messages = [{ role: 'user' as const, content: 'Stream this, please' }];
    const whole = await omnigate.createChatCompletion({ model: MODEL, messages });
    const chunks: ChatCompletionChunk[] = await collect(
      omnigate.streamChatCompletion({ model: MODEL, messages, stream_options: { include_usage: true } }),
    );
    expect(chunks.length).toBeGreaterThan(2);
    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe(whole.choices[0].message.content);
    expect(text).toBe('You said: Stream this, please');
    const last = chunks[chunks.length - 1];
    expect(last.choices).toEqual([]);
    expect(last.usage!.prompt_tokens + last.usage!.completion_tokens).toBe(last.usage!.total_tokens);
    expect(last.usage!.prompt_tokens).toBe(whole.usage!.prompt_tokens);
  });

  it('tool loop with streamed tool-call deltas', async () => {
    const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: weatherParameters } }];
    const assembled: Array<{ id: string; name: string; arguments: string }> = [];
    for await (const chunk of omnigate.streamChatCompletion({
      model: MODEL,
      messages: [{ role: 'user', content: CALL_TEXT }],
      tools,
    })) {
      for (const delta of chunk.choices[0]?.delta.tool_calls ?? []) {
        const slot = (assembled[delta.index] ??= { id: '', name: '', arguments: '' });
        slot.id ||= delta.id ?? '';
        slot.name += delta.function?.name ?? '';
        slot.arguments += delta.function?.arguments ?? '';
      }
    }
    expect(assembled).toHaveLength(1);
    expect(assembled[0].name).toBe('get_weather');
    expect(JSON.parse(assembled[0].arguments)).toEqual({ city: 'Paris' });

    const final = await omnigate.createChatCompletion({
      model: MODEL,
      tools,
      messages: [
        { role: 'user', content: CALL_TEXT },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: assembled[0].id,
              type: 'function',
              function: { name: 'get_weather', arguments: assembled[0].arguments },
            },
          ],
        },
        { role: 'tool', tool_call_id: assembled[0].id, content: TOOL_OUTPUT },
      ],
    });
    expect(final.choices[0].message.content).toBe(TOOL_REPORT);
  });
});

describe('client package: responses', () => {
  it('createResponse: output_text, then a function-call round trip through previous_response_id', async () => {
    const hello = await omnigate.createResponse({ model: MODEL, input: 'Hello' });
    expect(hello.output_text).toBe('You said: Hello');
    expect(hello.status).toBe('completed');

    const tools = [{ type: 'function' as const, name: 'get_weather', parameters: weatherParameters }];
    const first = await omnigate.createResponse({ model: MODEL, input: CALL_TEXT, tools });
    const call = first.output.find((item) => item.type === 'function_call');
    if (call?.type !== 'function_call') {
      throw new Error('expected a function_call output item');
    }
    expect(call.name).toBe('get_weather');
    expect(JSON.parse(call.arguments)).toEqual({ city: 'Paris' });
    const second = await omnigate.createResponse({
      model: MODEL,
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: TOOL_OUTPUT }],
      tools,
    });
    expect(second.output_text).toBe(TOOL_REPORT);
  });

  it('streamResponse: response.created … response.completed with increasing sequence numbers', async () => {
    const events: ResponseStreamEvent[] = await collect(omnigate.streamResponse({ model: MODEL, input: 'Hello' }));
    expect(events[0].type).toBe('response.created');
    const last = events[events.length - 1];
    expect(last.type).toBe('response.completed');
    for (let i = 1; i < events.length; i += 1) {
      expect(events[i].sequence_number).toBeGreaterThan(events[i - 1].sequence_number);
    }
    const deltas = events
      .flatMap((event) => (event.type === 'response.output_text.delta' ? [event.delta] : []))
      .join('');
    expect(deltas).toBe('You said: Hello');
    if (last.type !== 'response.completed') {
      throw new Error('expected response.completed last');
    }
    expect(last.response.output_text).toBe('You said: Hello');
    // The streamed response was stored.
    const { data } = await omnigate.GET('/v1/responses/{response_id}', {
      params: { path: { response_id: last.response.id } },
    });
    expect(data?.output_text).toBe('You said: Hello');
  });
});

describe('client package: errors', () => {
  it('unknown model → OmnigateError 404 with requestId equal to x-svc-request-id', async () => {
    const error = await expectOmnigateError(
      omnigate.createChatCompletion({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(error.status).toBe(404);
    expect(error.param).toBe('model');
    expect(error.message).toContain('/v1/models');
    expect(error.requestId).toMatch(/^req_/);
  });

  it('bad key → OmnigateError 401 (JSON and stream helpers)', async () => {
    const bad = createClient({ baseUrl: started.baseURL, apiKey: 'sk-not-a-real-key' });
    const json = await expectOmnigateError(bad.createResponse({ model: MODEL, input: 'Hello' }));
    expect(json.status).toBe(401);
    expect(json.type).toBe('authentication_error');
    expect(json.requestId).toMatch(/^req_/);
    const streamed = await expectOmnigateError(
      collect(bad.streamChatCompletion({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] })),
    );
    expect(streamed.status).toBe(401);
    expect(streamed.requestId).toMatch(/^req_/);
    expect(streamed.requestId).not.toBe(json.requestId);
  });

  it('n: 2 and a store:false retrieve → OmnigateError 400 / 404', async () => {
    const badRequest = await expectOmnigateError(
      omnigate.createChatCompletion({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], n: 2 }),
    );
    expect(badRequest.status).toBe(400);
    expect(badRequest.requestId).toMatch(/^req_/);
    const unstored = await omnigate.createResponse({ model: MODEL, input: 'Hello', store: false });
    const notFound = await expectOmnigateError(
      omnigate.streamResponse({ model: MODEL, input: 'more', previous_response_id: unstored.id }).next(),
    );
    expect(notFound.status).toBe(404);
    expect(notFound.param).toBe('previous_response_id');
    expect(notFound.requestId).toMatch(/^req_/);
  });
});

describe('server health after the run', () => {
  it('logged no warnings or errors', () => {
    expect(started.testApp.logs.length).toBeGreaterThan(0);
    expect(started.testApp.logs.filter((line) => typeof line.level === 'number' && line.level >= 40)).toEqual([]);
  });
});

describe('client package: Anthropic Messages', () => {
  it('createMessage: exact text, Anthropic usage', async () => {
    const message = await omnigate.createMessage({
      model: MODEL,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Hello there' }],
    });
    expect(message.type).toBe('message');
    expect(message.model).toBe(MODEL);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.content).toEqual([{ type: 'text', text: 'You said: Hello there' }]);
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBeGreaterThan(0);
  });

  it('streamMessage: named events from message_start to message_stop whose text deltas equal the JSON text', async () => {
    const events = await collect(
      omnigate.streamMessage({ model: MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'Hello there' }] }),
    );
    const types = events.map((event) => event.type);
    expect(types[0]).toBe('message_start');
    expect(types.at(-1)).toBe('message_stop');
    expect(types).toContain('message_delta');
    const text = events
      .map((event) =>
        event.type === 'content_block_delta' && event.delta.type === 'text_delta' ? event.delta.text : '',
      )
      .join('');
    expect(text).toBe('You said: Hello there');
  });

  it('streamMessage: a tool_use block whose input_json_delta fragments give the exact input', async () => {
    const events = await collect(
      omnigate.streamMessage({
        model: MODEL,
        max_tokens: 64,
        tools: [{ name: 'get_weather', input_schema: weatherParameters }],
        messages: [{ role: 'user', content: CALL_TEXT }],
      }),
    );
    const start = events.find((event) => event.type === 'content_block_start');
    expect(
      start?.type === 'content_block_start' && start.content_block.type === 'tool_use' && start.content_block.name,
    ).toBe('get_weather');
    const json = events
      .map((event) =>
        event.type === 'content_block_delta' && event.delta.type === 'input_json_delta' ? event.delta.partial_json : '',
      )
      .join('');
    expect(JSON.parse(json)).toEqual({ city: 'Paris' });
    const delta = events.find((event) => event.type === 'message_delta');
    expect(delta?.type === 'message_delta' && delta.delta.stop_reason).toBe('tool_use');
  });

  it('countMessageTokens: the tokenizer count of the request', async () => {
    const { input_tokens } = await omnigate.countMessageTokens({
      model: MODEL,
      messages: [{ role: 'user', content: 'Hello there' }],
    });
    expect(input_tokens).toBeGreaterThan(0);
    const longer = await omnigate.countMessageTokens({
      model: MODEL,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Hello there' }],
    });
    expect(longer.input_tokens).toBeGreaterThan(input_tokens);
  });

  it('createMessage: an unknown model is an OmnigateError 404 in the Anthropic envelope with the request id', async () => {
    const error = await expectOmnigateError(
      omnigate.createMessage({ model: 'no-such-model', max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] }),
    );
    expect(error.status).toBe(404);
    expect(error.type).toBe('not_found_error');
    expect(error.requestId).toMatch(/^req_/);
  });
});

describe('files, search and answers through the client', () => {
  it('uploads from a stream, finds the file, answers with citations (JSON and streamed), and downloads it', async () => {
    const text = 'The harbour master raises the storm flag when the barometer falls quickly.';
    const file = await omnigate.uploadFile({
      file: (async function* () {
        yield new TextEncoder().encode(text);
      })(),
      filename: 'harbour.txt',
      purpose: 'user_data',
    });
    // The upload answers before its text is indexed.
    await started.testApp.searchIndex.idle();
    const found = await omnigate.webSearch({ query: 'storm flag barometer' });
    expect(found.results.map((result) => result.title)).toContain('harbour.txt');
    const answer = await omnigate.createSearchAnswer({ query: 'When is the storm flag raised?' });
    expect(answer.answer).toMatch(/\[1\]/);
    expect(answer.citations[0]).toMatchObject({ index: 1, title: 'harbour.txt' });
    const events = await collect(omnigate.streamSearchAnswer({ query: 'When is the storm flag raised?' }));
    expect(events[0]).toMatchObject({ type: 'answer.citations' });
    const bytes = await omnigate.downloadFile(file.id);
    expect(new TextDecoder().decode(bytes.data)).toBe(text);
    const tool = await omnigate.webSearchTool({ query: 'storm flag barometer' });
    expect(tool.output.results.map((result) => result.title)).toContain('harbour.txt');
  });

  it('understands an image through the REST tool', async () => {
    const png = await sharp({ create: { width: 2, height: 2, channels: 3, background: '#ff0000' } })
      .png()
      .toBuffer();
    const result = await omnigate.understandImage({
      prompt: 'What is this?',
      image_url: `data:image/png;base64,${png.toString('base64')}`,
    });
    expect(result.content.length).toBeGreaterThan(0);
    expect(result.analysis).toMatchObject({ width: 2, height: 2 });
  });
});

describe('embeddings and rerank', () => {
  it('createEmbeddings: float and base64 give the same vectors through embeddingVectors; rerank orders', async () => {
    const input = ['the keeper lights the lamp', 'ships pass the reef'];
    const floats = await omnigate.createEmbeddings({ model: 'local:embed', input, encoding_format: 'float' });
    const packed = await omnigate.createEmbeddings({ model: 'local:embed', input, encoding_format: 'base64' });
    expect(typeof packed.data[0]?.embedding).toBe('string');
    expect(embeddingVectors(packed)).toEqual(embeddingVectors(floats));
    const ranked = await omnigate.rerank({
      model: 'local:embed',
      query: 'who lights the lamp',
      documents: input,
    });
    expect(ranked.results.map((result) => result.index)).toEqual([0, 1]);
    const error = await omnigate
      .createEmbeddings({ model: 'local:embed', input: '' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OmnigateError);
    expect((error as OmnigateError).status).toBe(400);
  });
});
