/**
 * The client against a tiny node:http server that plays back canned answers (never the real Omnigate app):
 * the tests pin what goes on the wire (auth, paths, bodies, multipart) and how answers are turned into
 * values or `OmnigateError`s.
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createClient,
  OmnigateError,
  type ChatCompletion,
  type ChatCompletionChunk,
  type ErrorResponse,
  type OmnigateClient,
  type Video,
} from './index.js';

interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

type Handler = (request: RecordedRequest, res: ServerResponse) => void | Promise<void>;

const API_KEY = 'sk-omnigate-test';
const REQUEST_ID = 'req_01TEST';
let server: Server;
let baseUrl: string;
let handler: Handler;
let received: RecordedRequest[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
      };
      received.push(request);
      Promise.resolve(handler(request, res)).catch((error: unknown) => {
        res.destroy(error as Error);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

afterEach(() => {
  received = [];
});

function client(): OmnigateClient {
  return createClient({ baseUrl, apiKey: API_KEY });
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'x-svc-request-id': REQUEST_ID, ...headers });
  res.end(JSON.stringify(body));
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Writes an SSE body in pieces cut at awkward places (mid-field, mid-UTF-8, between frames), flushing each. */
async function sendSse(res: ServerResponse, wire: string, pieces = 7): Promise<void> {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    'x-svc-request-id': REQUEST_ID,
  });
  const bytes = Buffer.from(wire, 'utf8');
  const step = Math.max(1, Math.ceil(bytes.length / pieces) - 3);
  for (let offset = 0; offset < bytes.length; offset += step) {
    res.write(bytes.subarray(offset, offset + step));
    await pause(2);
  }
  res.end();
}

function chunk(
  content: string,
  finish: ChatCompletionChunk['choices'][number]['finish_reason'] = null,
): ChatCompletionChunk {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1732240000,
    model: 'local:echo',
    choices: [{ index: 0, delta: { content }, finish_reason: finish }],
  };
}

const frame = (data: unknown, event?: string): string =>
  `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;

async function expectOmnigateError(promise: Promise<unknown>): Promise<OmnigateError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(OmnigateError);
  return error as OmnigateError;
}

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) {
    items.push(item);
  }
  return items;
}

function video(status: Video['status'], progress: number, error: Video['error'] = null): Video {
  return {
    id: 'video_1',
    object: 'video',
    model: 'local:video',
    status,
    progress,
    created_at: 1763779200,
    completed_at: status === 'completed' ? 1763779206 : null,
    expires_at: null,
    prompt: 'A paper boat',
    seconds: '4',
    size: '1280x720',
    error,
    remixed_from_video_id: null,
  };
}

describe('createClient', () => {
  it('sends the API key as a bearer token to the spec path under the server root', async () => {
    handler = (_request, res) => sendJson(res, 200, { object: 'list', data: [], routes: [] });
    const { data, response } = await client().GET('/v1/models');
    expect(response.status).toBe(200);
    expect(data).toEqual({ object: 'list', data: [], routes: [] });
    expect(received).toHaveLength(1);
    expect(received[0].method).toBe('GET');
    expect(received[0].url).toBe('/v1/models');
    expect(received[0].headers.authorization).toBe(`Bearer ${API_KEY}`);
  });

  it('sends the bearer token on helper calls too, and uses an injected fetch', async () => {
    handler = (_request, res) => sendJson(res, 200, { input_tokens: 12 });
    const seen: string[] = [];
    const omnigate = createClient({
      baseUrl,
      apiKey: API_KEY,
      fetch: (request) => {
        seen.push(`${request.method} ${new URL(request.url).pathname}`);
        return fetch(request);
      },
    });
    const count = await omnigate.countMessageTokens({
      model: 'claude-sonnet-4-5',
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(count).toEqual({ input_tokens: 12 });
    expect(seen).toEqual(['POST /anthropic/v1/messages/count_tokens']);
    expect(received[0].headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(received[0].headers['content-type']).toBe('application/json');
  });
});

describe('JSON helpers', () => {
  const completion: ChatCompletion = {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1732240000,
    model: 'gpt-4o-mini',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: 'Paris.', refusal: null },
        finish_reason: 'stop',
        logprobs: null,
      },
    ],
    usage: { prompt_tokens: 21, completion_tokens: 2, total_tokens: 23 },
    system_fingerprint: null,
  };

  it('createChatCompletion posts the body and returns the typed completion', async () => {
    handler = (_request, res) => sendJson(res, 200, completion);
    const result = await client().createChatCompletion({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Capital of France?' }],
    });
    expect(result).toEqual(completion);
    expect(received[0].url).toBe('/v1/chat/completions');
    expect(JSON.parse(received[0].body.toString())).toEqual({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Capital of France?' }],
    });
  });

  it('turns an OpenAI-envelope error into OmnigateError with status, type, code, param and request id', async () => {
    const body: ErrorResponse = {
      error: {
        message: "The model 'gpt-9' does not exist.",
        type: 'not_found_error',
        param: 'model',
        code: 'model_not_found',
      },
    };
    handler = (_request, res) => sendJson(res, 404, body, { 'x-svc-request-id': 'req_404' });
    const error = await expectOmnigateError(
      client().createChatCompletion({ model: 'gpt-9', messages: [{ role: 'user', content: 'Hi' }] }),
    );
    expect(error).toMatchObject({
      status: 404,
      type: 'not_found_error',
      code: 'model_not_found',
      param: 'model',
      message: "The model 'gpt-9' does not exist.",
      requestId: 'req_404',
    });
    expect(error.body).toEqual(body);
  });

  it('turns an Anthropic-envelope error into OmnigateError', async () => {
    handler = (_request, res) =>
      sendJson(
        res,
        429,
        { type: 'error', error: { type: 'rate_limit_error', message: 'Slow down.' }, request_id: 'req_body' },
        { 'x-svc-request-id': 'req_header', 'retry-after': '20' },
      );
    const error = await expectOmnigateError(
      client().createMessage({
        model: 'claude-sonnet-4-5',
        max_tokens: 16,
        messages: [{ role: 'user', content: 'Hi' }],
      }),
    );
    expect(error).toMatchObject({
      status: 429,
      type: 'rate_limit_error',
      code: null,
      param: null,
      message: 'Slow down.',
      requestId: 'req_header',
    });
    expect(received[0].url).toBe('/anthropic/v1/messages');
  });

  it('keeps a non-JSON error body in the message', async () => {
    handler = (_request, res) => {
      res.writeHead(502, { 'content-type': 'text/plain', 'x-svc-request-id': 'req_502' });
      res.end('Bad gateway');
    };
    const error = await expectOmnigateError(client().createResponse({ model: 'gpt-4o-mini', input: 'Hi' }));
    expect(error).toMatchObject({
      status: 502,
      type: 'http_error',
      message: 'HTTP 502: Bad gateway',
      requestId: 'req_502',
    });
  });
});

describe('streaming helpers', () => {
  it('streamChatCompletion yields the chunks of a stream split at awkward byte boundaries and stops at [DONE]', async () => {
    const chunks = [chunk('Caf'), chunk('é 雨 🌧'), chunk('.', 'stop')];
    handler = async (_request, res) => {
      // Anything after [DONE] must be ignored.
      await sendSse(res, chunks.map((c) => frame(c)).join('') + frame('[DONE]') + frame(chunk('ignored')), 11);
    };
    const got = await collect(
      client().streamChatCompletion({ model: 'local:echo', messages: [{ role: 'user', content: 'Hi' }] }),
    );
    expect(got).toEqual(chunks);
    expect(got.map((c) => c.choices[0].delta.content).join('')).toBe('Café 雨 🌧.');
    expect(JSON.parse(received[0].body.toString())).toMatchObject({ stream: true });
    expect(received[0].headers.authorization).toBe(`Bearer ${API_KEY}`);
  });

  it('streamChatCompletion throws OmnigateError on an error frame after yielding what came before', async () => {
    handler = (_request, res) =>
      sendSse(
        res,
        frame(chunk('Hel')) +
          frame({
            error: {
              message: 'Upstream openai timed out.',
              type: 'timeout_error',
              param: null,
              code: 'upstream_timeout',
            },
          }),
      );
    const got: ChatCompletionChunk[] = [];
    const error = await expectOmnigateError(
      (async () => {
        for await (const c of client().streamChatCompletion({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: 'Hi' }],
        })) {
          got.push(c);
        }
      })(),
    );
    expect(got).toEqual([chunk('Hel')]);
    expect(error).toMatchObject({
      status: null,
      type: 'timeout_error',
      code: 'upstream_timeout',
      message: 'Upstream openai timed out.',
      requestId: REQUEST_ID,
    });
  });

  it('streamChatCompletion throws OmnigateError for an HTTP error before the stream starts', async () => {
    handler = (_request, res) =>
      sendJson(
        res,
        401,
        { error: { message: 'Invalid API key.', type: 'authentication_error', param: null, code: 'invalid_api_key' } },
        {
          'x-svc-request-id': 'req_401',
        },
      );
    const error = await expectOmnigateError(
      collect(client().streamChatCompletion({ model: 'm', messages: [{ role: 'user', content: 'Hi' }] })),
    );
    expect(error).toMatchObject({
      status: 401,
      type: 'authentication_error',
      code: 'invalid_api_key',
      requestId: 'req_401',
    });
  });

  it('streamChatCompletion refuses a 2xx answer that is not an event stream', async () => {
    handler = (_request, res) => sendJson(res, 200, { id: 'chatcmpl-1' });
    const error = await expectOmnigateError(
      collect(client().streamChatCompletion({ model: 'm', messages: [{ role: 'user', content: 'Hi' }] })),
    );
    expect(error).toMatchObject({ status: 200, type: 'invalid_response' });
  });

  it('closes the connection when the consumer stops reading early', async () => {
    let closed = false;
    handler = async (_request, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'x-svc-request-id': REQUEST_ID });
      res.on('close', () => {
        closed = true;
      });
      for (let i = 0; i < 500 && !closed; i++) {
        res.write(frame(chunk(String(i))));
        await pause(5);
      }
      res.end();
    };
    for await (const c of client().streamChatCompletion({ model: 'm', messages: [{ role: 'user', content: 'Hi' }] })) {
      expect(c.choices[0].delta.content).toBe('0');
      break;
    }
    await expect.poll(() => closed, { timeout: 2000, interval: 10 }).toBe(true);
  });

  it('streamResponse yields named Responses events and throws on the error event', async () => {
    const delta = {
      type: 'response.output_text.delta',
      sequence_number: 1,
      item_id: 'msg_1',
      output_index: 0,
      content_index: 0,
      delta: 'Hi',
      logprobs: [],
    };
    handler = (_request, res) =>
      sendSse(
        res,
        frame(delta, 'response.output_text.delta') +
          frame(
            { type: 'error', sequence_number: 2, code: 'upstream_error', message: 'Upstream failed.', param: null },
            'error',
          ),
      );
    const got: unknown[] = [];
    const error = await expectOmnigateError(
      (async () => {
        for await (const event of client().streamResponse({ model: 'gpt-4o-mini', input: 'Hi' })) {
          got.push(event);
          if (event.type === 'response.output_text.delta') {
            expect(event.delta).toBe('Hi');
          }
        }
      })(),
    );
    expect(got).toEqual([delta]);
    expect(error).toMatchObject({
      status: null,
      code: 'upstream_error',
      message: 'Upstream failed.',
      requestId: REQUEST_ID,
    });
    expect(received[0].url).toBe('/v1/responses');
    expect(JSON.parse(received[0].body.toString())).toEqual({ model: 'gpt-4o-mini', input: 'Hi', stream: true });
  });

  it('streamMessage yields Anthropic events from /anthropic/v1/messages and throws on event: error', async () => {
    const events = [
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } },
      { type: 'ping' },
    ];
    handler = (_request, res) =>
      sendSse(
        res,
        events.map((event) => frame(event, event.type)).join('') +
          frame({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded.' } }, 'error'),
      );
    const got: unknown[] = [];
    const error = await expectOmnigateError(
      (async () => {
        for await (const event of client().streamMessage({
          model: 'claude-sonnet-4-5',
          max_tokens: 16,
          messages: [{ role: 'user', content: 'Hi' }],
        })) {
          got.push(event);
        }
      })(),
    );
    expect(got).toEqual(events);
    expect(error).toMatchObject({ type: 'overloaded_error', message: 'Overloaded.', status: null });
    expect(received[0].url).toBe('/anthropic/v1/messages');
  });

  it('streamSearchAnswer yields the answer events until the server closes the stream', async () => {
    const events = [
      { type: 'answer.citations', citations: [] },
      { type: 'answer.delta', delta: 'Node 22 ends in 2027.' },
      {
        type: 'answer.done',
        answer: 'Node 22 ends in 2027.',
        usage: { prompt_tokens: 9, completion_tokens: 6, total_tokens: 15, search_count: 1 },
      },
    ];
    handler = (_request, res) => sendSse(res, events.map((event) => frame(event, event.type)).join(''));
    const got = await collect(client().streamSearchAnswer({ query: 'Node 22 end of life?' }));
    expect(got).toEqual(events);
    expect(received[0].url).toBe('/v1/search/answer');
  });
});

describe('binary helpers', () => {
  // Every byte value, plus bytes that are invalid UTF-8, so any text decoding on the way would show.
  const bytes = Buffer.concat([
    Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
    Buffer.from([0xff, 0xfe, 0x00, 0xc3, 0x28]),
  ]);

  function sendBytes(res: ServerResponse, contentType: string): void {
    res.writeHead(200, {
      'content-type': contentType,
      'content-length': String(bytes.length),
      'x-svc-request-id': REQUEST_ID,
    });
    res.end(bytes);
  }

  it('createSpeech returns the audio bytes intact with their content type', async () => {
    handler = (_request, res) => sendBytes(res, 'audio/mpeg');
    const speech = await client().createSpeech({ model: 'tts-1', input: 'Hello', voice: 'alloy' });
    expect(Buffer.from(speech.data).equals(bytes)).toBe(true);
    expect(speech).toMatchObject({ contentType: 'audio/mpeg', requestId: REQUEST_ID });
    expect(received[0].url).toBe('/v1/audio/speech');
  });

  it('createMusic returns the audio bytes', async () => {
    handler = (_request, res) => sendBytes(res, 'audio/wav');
    const music = await client().createMusic({ model: 'local:music', prompt: 'piano', response_format: 'wav' });
    expect(Buffer.from(music.data).equals(bytes)).toBe(true);
    expect(music.contentType).toBe('audio/wav');
    expect(received[0].url).toBe('/v1/music/generations');
  });

  it('generateImages asks for base64 and hands back the decoded bytes', async () => {
    handler = (_request, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'x-svc-request-id': REQUEST_ID });
      res.end(
        JSON.stringify({
          created: 1,
          data: [{ b64_json: bytes.toString('base64'), revised_prompt: null }],
          output_format: 'webp',
          size: '64x64',
        }),
      );
    };
    const result = await client().generateImages({ prompt: 'a fox', size: '64x64' });
    expect(JSON.parse(received[0].body.toString('utf8'))).toMatchObject({
      prompt: 'a fox',
      response_format: 'b64_json',
    });
    expect(Buffer.from(result.images[0]).equals(bytes)).toBe(true);
    expect(result).toMatchObject({ format: 'webp', size: '64x64', revisedPrompts: [null], requestId: REQUEST_ID });
  });

  it('downloadMedia loads a signed link without sending the key, and throws the 410 of an expired one', async () => {
    handler = (_request, res) => sendBytes(res, 'image/png');
    const media = await client().downloadMedia(
      `${baseUrl}/v1/media/media_abcdefgh?expires=9&signature=abcdefghijklmnop`,
    );
    expect(Buffer.from(media.data).equals(bytes)).toBe(true);
    expect(media.contentType).toBe('image/png');
    expect(received[0].headers.authorization).toBeUndefined();
    handler = (_request, res) => {
      res.writeHead(410, { 'content-type': 'application/json', 'x-svc-request-id': REQUEST_ID });
      res.end(
        JSON.stringify({
          error: {
            message: 'This media link expired',
            type: 'invalid_request_error',
            param: null,
            code: 'link_expired',
          },
        }),
      );
    };
    const failure = await client()
      .downloadMedia(`${baseUrl}/v1/media/media_abcdefgh?expires=9&signature=abcdefghijklmnop`)
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OmnigateError);
    expect(failure).toMatchObject({ status: 410, code: 'link_expired', requestId: REQUEST_ID });
  });

  it('downloadFile fetches /v1/files/{id}/content', async () => {
    handler = (_request, res) => sendBytes(res, 'application/pdf');
    const file = await client().downloadFile('file-01 A/B');
    expect(Buffer.from(file.data).equals(bytes)).toBe(true);
    expect(file.contentType).toBe('application/pdf');
    expect(received[0].url).toBe('/v1/files/file-01%20A%2FB/content');
  });

  it('downloadVideoContent passes the variant and returns the bytes', async () => {
    handler = (_request, res) => sendBytes(res, 'image/png');
    const thumbnail = await client().downloadVideoContent('video_1', 'thumbnail');
    expect(Buffer.from(thumbnail.data).equals(bytes)).toBe(true);
    expect(received[0].url).toBe('/v1/videos/video_1/content?variant=thumbnail');

    handler = (_request, res) => sendBytes(res, 'video/mp4');
    const mp4 = await client().downloadVideoContent('video_1');
    expect(mp4.contentType).toBe('video/mp4');
    expect(received[1].url).toBe('/v1/videos/video_1/content');
  });

  it('throws OmnigateError for an error answer to a binary call', async () => {
    handler = (_request, res) =>
      sendJson(
        res,
        409,
        { error: { message: 'Not ready.', type: 'conflict_error', param: null, code: 'video_not_ready' } },
        {
          'x-svc-request-id': 'req_409',
        },
      );
    const error = await expectOmnigateError(client().downloadVideoContent('video_1'));
    expect(error).toMatchObject({ status: 409, code: 'video_not_ready', requestId: 'req_409' });
  });
});

describe('uploadFile', () => {
  it('sends multipart/form-data with the file bytes, filename and purpose', async () => {
    const fileObject = {
      id: 'file-1',
      object: 'file',
      bytes: 5,
      created_at: 1732258291,
      expires_at: null,
      filename: 'notes é.txt',
      purpose: 'assistants',
      status: 'processed',
      status_details: null,
      content_type: 'text/plain',
    };
    handler = (_request, res) => sendJson(res, 200, fileObject);
    const content = new Uint8Array([0x68, 0x69, 0x00, 0xff, 0x0a]);
    const stored = await client().uploadFile({
      file: new Blob([content], { type: 'text/plain' }),
      filename: 'notes é.txt',
      purpose: 'assistants',
      expiresAfterSeconds: 86400,
    });
    expect(stored).toEqual(fileObject);

    const request = received[0];
    expect(request.url).toBe('/v1/files');
    expect(request.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(request.headers.authorization).toBe(`Bearer ${API_KEY}`);
    const form = await new Response(new Uint8Array(request.body), {
      headers: { 'content-type': request.headers['content-type']! },
    }).formData();
    const file = form.get('file');
    expect(file).toBeInstanceOf(Blob);
    expect((file as File).name).toBe('notes é.txt');
    expect((file as File).type).toBe('text/plain');
    expect(new Uint8Array(await (file as File).arrayBuffer())).toEqual(content);
    expect(form.get('purpose')).toBe('assistants');
    expect(form.get('expires_after[anchor]')).toBe('created_at');
    expect(form.get('expires_after[seconds]')).toBe('86400');
  });
});

describe('transcribeAudio and translateAudio', () => {
  it('send the form as the OpenAI SDKs do (arrays as repeated [] fields) and read JSON or text by format', async () => {
    handler = (_request, res) => sendJson(res, 200, { text: 'Hello there.' });
    const audio = new Blob([new Uint8Array([0x52, 0x49, 0x46, 0x46])], { type: 'audio/wav' });
    const json = await client().transcribeAudio({
      file: audio,
      filename: 'note.wav',
      model: 'whisper-1',
      language: 'en',
      temperature: 0.2,
      responseFormat: 'verbose_json',
      timestampGranularities: ['word', 'segment'],
    });
    expect(json).toEqual({ text: 'Hello there.' });
    const request = received[0];
    expect(request.url).toBe('/v1/audio/transcriptions');
    const form = await new Response(new Uint8Array(request.body), {
      headers: { 'content-type': request.headers['content-type']! },
    }).formData();
    expect((form.get('file') as File).name).toBe('note.wav');
    expect(form.get('model')).toBe('whisper-1');
    expect(form.get('language')).toBe('en');
    expect(form.get('temperature')).toBe('0.2');
    expect(form.getAll('timestamp_granularities[]')).toEqual(['word', 'segment']);

    handler = (_request, res) => {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('Hello and welcome.\n');
    };
    const text = await client().translateAudio({ file: audio, model: 'whisper-1', responseFormat: 'text' });
    expect(text).toBe('Hello and welcome.\n');
    expect(received[1].url).toBe('/v1/audio/translations');
  });
});

describe('waitForVideo', () => {
  function playVideos(sequence: Video[]): void {
    let index = 0;
    handler = (_request, res) => sendJson(res, 200, sequence[Math.min(index++, sequence.length - 1)]);
  }

  it('polls until completed, reporting progress', async () => {
    playVideos([video('queued', 0), video('processing', 40), video('processing', 80), video('completed', 100)]);
    const progress: number[] = [];
    const done = await client().waitForVideo('video_1', {
      intervalMs: 5,
      onProgress: (v) => progress.push(v.progress),
    });
    expect(done.status).toBe('completed');
    expect(progress).toEqual([0, 40, 80, 100]);
    expect(received.map((request) => request.url)).toEqual(Array(4).fill('/v1/videos/video_1'));
    expect(received.every((request) => request.headers.authorization === `Bearer ${API_KEY}`)).toBe(true);
  });

  it("throws OmnigateError with the video's error when the task fails", async () => {
    const failed = video('failed', 0, { code: 'content_policy_violation', message: 'The prompt was refused.' });
    playVideos([video('processing', 10), failed]);
    const error = await expectOmnigateError(client().waitForVideo('video_1', { intervalMs: 5 }));
    expect(error).toMatchObject({
      status: null,
      type: 'video_failed',
      code: 'content_policy_violation',
      message: 'The prompt was refused.',
      requestId: REQUEST_ID,
    });
    expect(error.body).toEqual(failed);
  });

  it('throws when the task is not done before the timeout', async () => {
    playVideos([video('processing', 10)]);
    const started = Date.now();
    const error = await expectOmnigateError(client().waitForVideo('video_1', { intervalMs: 10, timeoutMs: 60 }));
    expect(error).toMatchObject({ type: 'timeout_error', code: 'video_wait_timeout' });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(received.length).toBeGreaterThanOrEqual(2);
  });

  it('throws OmnigateError when the task does not exist', async () => {
    handler = (_request, res) =>
      sendJson(res, 404, {
        error: { message: 'No video video_x.', type: 'not_found_error', param: null, code: 'not_found' },
      });
    const error = await expectOmnigateError(client().waitForVideo('video_x', { intervalMs: 5 }));
    expect(error).toMatchObject({ status: 404, type: 'not_found_error', requestId: REQUEST_ID });
  });

  it('stops waiting when its signal is aborted', async () => {
    playVideos([video('processing', 10)]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('gave up')), 30);
    await expect(client().waitForVideo('video_1', { intervalMs: 10, signal: controller.signal })).rejects.toThrow(
      'gave up',
    );
  });
});
