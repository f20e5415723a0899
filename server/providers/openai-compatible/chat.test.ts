import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError, UpstreamError } from '../../core/api-error.js';
import { countCallInputTokens, countTextTokens } from '../../tokens/tokenizer.js';
import type { ChatCallOptions, ChatStreamPart } from '../../core/chat.js';
import type { CallContext, CallWarning } from '../../core/call-context.js';
import { sseHead, writeInPieces } from '../../../test/fakes/answers.js';
import { startFakeUpstream, type FakeUpstream } from '../../../test/fakes/fake-upstream.js';
import { openAIFixture as fixture } from '../../../test/fakes/fixtures.js';
import type { OpenAICompatibleConfig } from './http-client.js';
import { createOpenAICompatibleProvider, type OpenAICompatibleProvider } from './index.js';

const OPTIONS: ChatCallOptions = {
  messages: [{ role: 'user', content: [{ type: 'text', text: 'What is the capital of France?' }] }],
};
const TOOLS: ChatCallOptions['tools'] = [
  { name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } },
  { name: 'get_time', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
];

let upstream: FakeUpstream;
let provider: OpenAICompatibleProvider;
let warnings: CallWarning[];

function config(overrides: Partial<OpenAICompatibleConfig> = {}): OpenAICompatibleConfig {
  return {
    id: 'vllm',
    type: 'openai-compatible',
    base_url: `${upstream.origin}/v1`,
    api_key: 'sk-test-secret-0123456789',
    timeout_ms: 5_000,
    max_connections: 4,
    headers: { 'X-Org': 'acme' },
    responses: 'translate',
    ...overrides,
  };
}

function context(signal: AbortSignal = new AbortController().signal): CallContext {
  return { signal, requestId: 'req_1', warn: (warning) => warnings.push(warning) };
}

async function collect(parts: AsyncIterable<ChatStreamPart>): Promise<ChatStreamPart[]> {
  const collected: ChatStreamPart[] = [];
  for await (const part of parts) {
    collected.push(part);
  }
  return collected;
}

function replay(name: string, pieceSize = 7) {
  return async (_request: unknown, res: import('node:http').ServerResponse) => {
    sseHead(res);
    await writeInPieces(res, fixture(name), pieceSize);
    res.end();
  };
}

function jsonAnswer(status: number, body: unknown, headers: Record<string, string> = {}) {
  return (_request: unknown, res: import('node:http').ServerResponse) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
}

beforeEach(async () => {
  upstream = await startFakeUpstream();
  warnings = [];
  provider = createOpenAICompatibleProvider(config());
});

afterEach(async () => {
  await provider.close();
  await upstream.close();
});

describe('OpenAI-compatible chat model: generate', () => {
  it('posts to <base>/chat/completions and decodes a text answer with cached tokens', async () => {
    upstream.handle(jsonAnswer(200, fixture('text.json')));
    const result = await provider
      .chatModel('gpt-4.1-mini')
      .generate({ ...OPTIONS, maxOutputTokens: 64, temperature: 0 }, context());
    expect(result).toEqual({
      content: [{ type: 'text', text: 'The capital of France is Paris.' }],
      finishReason: 'stop',
      usage: { inputTokens: 1342, outputTokens: 8, cacheReadTokens: 1280, reasoningTokens: 0 },
    });
    expect(upstream.requests).toHaveLength(1);
    const [request] = upstream.requests;
    expect(request.method).toBe('POST');
    expect(request.url).toBe('/v1/chat/completions');
    expect(request.body).toEqual({
      model: 'gpt-4.1-mini',
      messages: [{ role: 'user', content: 'What is the capital of France?' }],
      stream: false,
      max_tokens: 64,
      temperature: 0,
    });
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['x-org']).toBe('acme');
  });

  it('sends the configured key as a Bearer token', async () => {
    upstream.handle(jsonAnswer(200, fixture('text.json')));
    await provider.chatModel('m').generate(OPTIONS, context());
    expect(upstream.requests[0].headers.authorization).toBe('Bearer sk-test-secret-0123456789');
  });

  it('sends no Authorization header when no key is configured', async () => {
    upstream.handle(jsonAnswer(200, fixture('text.json')));
    const keyless = createOpenAICompatibleProvider(config({ api_key: undefined }));
    try {
      await keyless.chatModel('m').generate(OPTIONS, context());
    } finally {
      await keyless.close();
    }
    expect(upstream.requests[0].headers.authorization).toBeUndefined();
  });

  it('keeps the query of the base URL', async () => {
    upstream.handle(jsonAnswer(200, fixture('text.json')));
    const azure = createOpenAICompatibleProvider(
      config({ base_url: `${upstream.origin}/openai/deployments/d1?api-version=2024-10-21` }),
    );
    try {
      await azure.chatModel('m').generate(OPTIONS, context());
    } finally {
      await azure.close();
    }
    expect(upstream.requests[0].url).toBe('/openai/deployments/d1/chat/completions?api-version=2024-10-21');
  });

  it('counts tokens with the tokenizer estimate', async () => {
    expect(await provider.chatModel('m').countTokens(OPTIONS, context())).toBe(await countCallInputTokens(OPTIONS));
    expect(upstream.requests).toHaveLength(0);
  });
});

describe('OpenAI-compatible chat model: stream', () => {
  it('streams text split at awkward byte boundaries, asking for and keeping usage with cached tokens', async () => {
    upstream.handle(replay('text.sse', 5));
    const parts = await collect(provider.chatModel('gpt-4.1-mini').stream(OPTIONS, context()));
    expect(parts).toEqual([
      ...['The', ' capital', ' of', ' France', ' is', ' Paris', '.'].map((text) => ({ type: 'text-delta', text })),
      {
        type: 'finish',
        finishReason: 'stop',
        usage: { inputTokens: 1342, outputTokens: 8, cacheReadTokens: 1280, reasoningTokens: 0 },
      },
    ]);
    expect(upstream.requests[0].body).toMatchObject({
      model: 'gpt-4.1-mini',
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(upstream.requests[0].headers.accept).toBe('text/event-stream');
  });

  it('reassembles a tool call whose arguments arrive in fourteen fragments', async () => {
    upstream.handle(replay('tool-call-fragments.sse', 3));
    const parts = await collect(provider.chatModel('m').stream({ ...OPTIONS, tools: TOOLS }, context()));
    const deltas = parts.filter((part) => part.type === 'tool-call-delta');
    expect(deltas).toHaveLength(14);
    expect(parts[0]).toEqual({
      type: 'tool-call-start',
      index: 0,
      id: 'call_Qx4h2fXv9sLmP0aKdT3yRz1B',
      name: 'get_weather',
    });
    expect(JSON.parse(deltas.map((part) => part.argumentsDelta).join(''))).toEqual({
      location: 'Paris, France',
      unit: 'celsius',
      days: 3,
    });
    expect(deltas.map((part) => part.argumentsDelta).join('')).toBe(
      '{"location": "Paris, France", "unit": "celsius", "days": 3}',
    );
    expect(parts.slice(-2)).toEqual([
      { type: 'tool-call-end', index: 0 },
      {
        type: 'finish',
        finishReason: 'tool-calls',
        usage: { inputTokens: 87, outputTokens: 24, cacheReadTokens: 0, reasoningTokens: 0 },
      },
    ]);
  });

  it('keeps two parallel tool calls apart when their fragments interleave', async () => {
    upstream.handle(replay('parallel-tool-calls.sse', 11));
    const parts = await collect(provider.chatModel('m').stream({ ...OPTIONS, tools: TOOLS }, context()));
    expect(parts).toEqual([
      { type: 'tool-call-start', index: 0, id: 'call_paris01', name: 'get_weather' },
      { type: 'tool-call-start', index: 1, id: 'call_tokyo02', name: 'get_time' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{"ci' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: '{"ci' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: 'ty": "' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: 'ty": "' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: 'Paris"}' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: 'Tokyo"}' },
      { type: 'tool-call-end', index: 0 },
      { type: 'tool-call-end', index: 1 },
      {
        type: 'finish',
        finishReason: 'tool-calls',
        usage: { inputTokens: 120, outputTokens: 40, cacheReadTokens: 64, reasoningTokens: 0 },
      },
    ]);
  });

  it('streams vLLM reasoning_content before the answer, with reasoning tokens', async () => {
    upstream.handle(replay('reasoning.sse', 13));
    const parts = await collect(
      provider.chatModel('deepseek-ai/DeepSeek-R1-Distill-Qwen-7B').stream(OPTIONS, context()),
    );
    expect(parts).toEqual([
      ...['Okay', ', 17', ' times', ' 3', ' is', ' 51', '.'].map((text) => ({ type: 'reasoning-delta', text })),
      { type: 'reasoning-end' },
      ...['17', ' × 3', ' = **51**'].map((text) => ({ type: 'text-delta', text })),
      { type: 'finish', finishReason: 'stop', usage: { inputTokens: 19, outputTokens: 22, reasoningTokens: 12 } },
    ]);
  });

  it('estimates usage with the tokenizer when the upstream (Ollama) sends none', async () => {
    upstream.handle(replay('ollama-reasoning-no-usage.sse', 9));
    const logged: string[] = [];
    const ollama = createOpenAICompatibleProvider(config({ id: 'ollama', api_key: undefined }), {
      logger: { warn: (_object, message) => logged.push(message) },
    });
    let parts: ChatStreamPart[];
    try {
      parts = await collect(ollama.chatModel('qwen3:0.6b').stream(OPTIONS, context()));
    } finally {
      await ollama.close();
    }
    expect(parts).toEqual([
      { type: 'reasoning-delta', text: 'Greet' },
      { type: 'reasoning-delta', text: ' back.' },
      { type: 'reasoning-end' },
      { type: 'text-delta', text: 'Hello' },
      { type: 'text-delta', text: ' there!' },
      {
        type: 'finish',
        finishReason: 'stop',
        usage: {
          inputTokens: await countCallInputTokens(OPTIONS),
          outputTokens: await countTextTokens('Greet back.Hello there!'),
        },
      },
    ]);
    expect(logged).toEqual(['upstream reported no usage; estimating tokens']);
  });

  it('turns a JSON answer to a streamed call into stream parts', async () => {
    upstream.handle(jsonAnswer(200, fixture('text.json')));
    const parts = await collect(provider.chatModel('m').stream(OPTIONS, context()));
    expect(parts).toEqual([
      { type: 'text-delta', text: 'The capital of France is Paris.' },
      {
        type: 'finish',
        finishReason: 'stop',
        usage: { inputTokens: 1342, outputTokens: 8, cacheReadTokens: 1280, reasoningTokens: 0 },
      },
    ]);
  });
});

describe('OpenAI-compatible chat model: failures', () => {
  const upstream401 = {
    error: {
      message:
        'Incorrect API key provided: sk-test***6789. You can find your API key at https://platform.openai.com/account/api-keys.',
      type: 'invalid_request_error',
      param: null,
      code: 'invalid_api_key',
    },
  };

  it('maps an upstream 401 to a 502 upstream_error without echoing the key', async () => {
    upstream.handle(jsonAnswer(401, upstream401));
    const error = await provider
      .chatModel('m')
      .generate(OPTIONS, context())
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({
      status: 502,
      type: 'upstream_error',
      code: 'upstream_error',
      upstreamStatus: 401,
      provider: 'vllm',
    });
    expect((error as Error).message).toContain('Incorrect API key provided: [redacted]');
    expect((error as Error).message).not.toMatch(/sk-test/);
  });

  it('maps an upstream 429 to a 429 keeping Retry-After, before the first streamed part', async () => {
    upstream.handle(
      jsonAnswer(
        429,
        { error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' } },
        { 'retry-after': '7' },
      ),
    );
    const iterator = provider.chatModel('m').stream(OPTIONS, context())[Symbol.asyncIterator]();
    const error = await iterator.next().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({
      status: 429,
      type: 'rate_limit_error',
      code: 'rate_limit_exceeded',
      headers: { 'retry-after': '7' },
      upstreamStatus: 429,
    });
    expect((error as Error).message).toContain('Rate limit reached for requests');
  });

  it('maps an upstream 500 to a 502', async () => {
    upstream.handle(jsonAnswer(500, 'Internal Server Error'));
    await expect(provider.chatModel('m').generate(OPTIONS, context())).rejects.toMatchObject({
      status: 502,
      type: 'upstream_error',
      upstreamStatus: 500,
    });
  });

  it('maps an upstream that does not answer in timeout_ms to a 504', async () => {
    upstream.handle(() => {});
    const slow = createOpenAICompatibleProvider(config({ timeout_ms: 150 }));
    try {
      await expect(slow.chatModel('m').generate(OPTIONS, context())).rejects.toMatchObject({
        status: 504,
        type: 'timeout_error',
        code: 'upstream_timeout',
      });
    } finally {
      await slow.close();
    }
  });

  it('maps a stream that stalls after its first event to a 504 thrown mid-stream', async () => {
    upstream.handle((_request, res) => {
      sseHead(res);
      res.write('data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n');
    });
    const slow = createOpenAICompatibleProvider(config({ timeout_ms: 150 }));
    const seen: ChatStreamPart[] = [];
    try {
      const error = await (async () => {
        for await (const part of slow.chatModel('m').stream(OPTIONS, context())) {
          seen.push(part);
        }
      })().catch((caught: unknown) => caught);
      expect(error).toMatchObject({ status: 504, code: 'upstream_timeout' });
    } finally {
      await slow.close();
    }
    expect(seen).toEqual([{ type: 'text-delta', text: 'Hel' }]);
  });

  it('maps a refused connection to a 502', async () => {
    const gone = await startFakeUpstream();
    const origin = gone.origin;
    await gone.close();
    const refused = createOpenAICompatibleProvider(config({ base_url: `${origin}/v1` }));
    try {
      const error = await refused
        .chatModel('m')
        .generate(OPTIONS, context())
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(UpstreamError);
      expect(error).toMatchObject({ status: 502, type: 'upstream_error', upstreamStatus: null });
      expect((error as Error).message).toContain('ECONNREFUSED');
    } finally {
      await refused.close();
    }
  });

  it('closes the upstream connection when the call is aborted mid-stream', async () => {
    upstream.handle((_request, res) => {
      sseHead(res);
      res.write('data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n');
    });
    const controller = new AbortController();
    const closed = upstream.socketClosed();
    const iterator = provider.chatModel('m').stream(OPTIONS, context(controller.signal))[Symbol.asyncIterator]();
    expect(await iterator.next()).toEqual({ done: false, value: { type: 'text-delta', text: 'Hel' } });
    const pending = iterator.next();
    controller.abort(new Error('client disconnected'));
    const error = await pending.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 499, code: 'client_closed_request' });
    await closed;
  });

  it('closes the upstream connection when the consumer stops reading', async () => {
    upstream.handle((_request, res) => {
      sseHead(res);
      res.write('data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n');
    });
    const closed = upstream.socketClosed();
    for await (const part of provider.chatModel('m').stream(OPTIONS, context())) {
      expect(part).toEqual({ type: 'text-delta', text: 'Hel' });
      break;
    }
    await closed;
  });

  it('reuses the kept-alive connection for the next call after a streamed answer', async () => {
    upstream.handle(replay('text.sse', 64));
    const model = provider.chatModel('m');
    await collect(model.stream(OPTIONS, context()));
    await new Promise((resolve) => setTimeout(resolve, 20));
    await collect(model.stream(OPTIONS, context()));
    expect(upstream.requests).toHaveLength(2);
    expect(upstream.requests[1].remotePort).toBe(upstream.requests[0].remotePort);
  });

  it('throws a 502 when the upstream stream ends without a finish_reason', async () => {
    upstream.handle((_request, res) => {
      sseHead(res);
      res.end('data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n');
    });
    await expect(collect(provider.chatModel('m').stream(OPTIONS, context()))).rejects.toMatchObject({ status: 502 });
  });
});

describe('OpenAI-compatible chat model: passthrough', () => {
  it('forwards a chat-completions body untouched and returns the raw bytes', async () => {
    const text = fixture('text.sse');
    upstream.handle(async (_request, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'x-internal': 'no', 'retry-after': '1' });
      await writeInPieces(res, text, 100);
      res.end();
    });
    const body = {
      model: 'gpt-4.1-mini',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      logit_bias: { '1': 2 },
      vendor_extension: { x: 1 },
    };
    const model = provider.chatModel('gpt-4.1-mini');
    const passthrough = model.passthrough?.['openai-chat'];
    expect(passthrough).toBeDefined();
    expect(model.passthrough?.['openai-responses']).toBeUndefined();
    const response = await passthrough!.forward(body, {
      ...context(),
      headers: { 'openai-beta': 'x', authorization: 'Bearer caller-key' },
    });
    expect(response.status).toBe(200);
    expect(response.headers).toEqual({ 'content-type': 'text/event-stream', 'retry-after': '1' });
    const received: Buffer[] = [];
    for await (const piece of response.body) {
      received.push(Buffer.from(piece));
    }
    expect(Buffer.concat(received).toString('utf8')).toBe(text);
    expect(upstream.requests[0]).toMatchObject({ url: '/v1/chat/completions', body });
    expect(upstream.requests[0].headers.authorization).toBe('Bearer sk-test-secret-0123456789');
    expect(upstream.requests[0].headers['openai-beta']).toBe('x');
    expect(upstream.requests[0].headers.accept).toBe('text/event-stream');
  });

  it('forwards Responses bodies to <base>/responses when the upstream serves them natively', async () => {
    upstream.handle(jsonAnswer(200, { id: 'resp_1', object: 'response', status: 'completed' }));
    const native = createOpenAICompatibleProvider(config({ responses: 'native' }));
    try {
      const response = await native
        .chatModel('m')
        .passthrough!['openai-responses']!.forward({ model: 'm', input: 'hi' }, context());
      const received: Buffer[] = [];
      for await (const piece of response.body) {
        received.push(Buffer.from(piece));
      }
      expect(JSON.parse(Buffer.concat(received).toString('utf8'))).toEqual({
        id: 'resp_1',
        object: 'response',
        status: 'completed',
      });
      expect(response.headers).toEqual({ 'content-type': 'application/json' });
    } finally {
      await native.close();
    }
    expect(upstream.requests[0]).toMatchObject({ url: '/v1/responses', body: { model: 'm', input: 'hi' } });
  });

  it('throws our error for a non-2xx passthrough answer', async () => {
    upstream.handle(jsonAnswer(429, { error: { message: 'slow down' } }, { 'retry-after': '3' }));
    await expect(
      provider.chatModel('m').passthrough!['openai-chat']!.forward({ model: 'm', messages: [] }, context()),
    ).rejects.toMatchObject({
      status: 429,
      headers: { 'retry-after': '3' },
    });
  });
});
