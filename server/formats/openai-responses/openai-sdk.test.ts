/**
 * The codec against the official `openai` SDK (6.49): the SDK's own stream accumulator must accept our event
 * sequence and rebuild the same response, and what the SDK sends must decode. The SDK talks to an injected
 * `fetch`, so no server is involved; the SSE framing here is the minimal one the SDK parses.
 */
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import type { ChatStreamPart } from '../../core/chat.js';
import type { CallWarning } from '../../core/call-context.js';
import { decodeResponsesRequest } from './decode-request.js';
import { encodeResponsesStream } from './encode-stream.js';
import { testMeta } from '../../../test/helpers/responses-meta.js';
import type { ResponsesRequestBody, ResponsesWireEvent } from './wire-types.js';

function sseBody(events: ResponsesWireEvent[]): string {
  return events.map((event) => `event: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`).join('');
}

const parts: ChatStreamPart[] = [
  { type: 'reasoning-delta', text: 'Weather needs a tool.' },
  { type: 'reasoning-end' },
  { type: 'text-delta', text: 'Let me ' },
  { type: 'text-delta', text: 'check.' },
  { type: 'tool-call-start', index: 0, id: 'call_w1', name: 'weather' },
  { type: 'tool-call-delta', index: 0, argumentsDelta: '{"ci' },
  { type: 'tool-call-delta', index: 0, argumentsDelta: 'ty":"Os' },
  { type: 'tool-call-delta', index: 0, argumentsDelta: 'lo"}' },
  { type: 'tool-call-end', index: 0 },
  {
    type: 'finish',
    finishReason: 'tool-calls',
    usage: { inputTokens: 50, outputTokens: 20, cacheReadTokens: 0, reasoningTokens: 5 },
  },
];

describe('openai SDK conformance of the Responses codec', () => {
  it('the SDK stream helper accumulates our events into our final response', async () => {
    const stream = encodeResponsesStream(
      (async function* () {
        yield* parts;
      })(),
      testMeta(),
    );
    const events: ResponsesWireEvent[] = [];
    for await (const event of stream) {
      events.push(event);
    }
    const client = new OpenAI({
      apiKey: 'test',
      baseURL: 'http://127.0.0.1:1/v1',
      maxRetries: 0,
      fetch: async () =>
        new Response(sseBody(events), { status: 200, headers: { 'content-type': 'text/event-stream' } }),
    });

    const sdkStream = client.responses.stream({ model: 'test-model', input: 'Weather in Oslo?' });
    const argumentSnapshots: string[] = [];
    sdkStream.on('response.function_call_arguments.delta', (event) => argumentSnapshots.push(event.snapshot));
    const final = await sdkStream.finalResponse();

    expect(argumentSnapshots).toEqual(['{"ci', '{"city":"Os', '{"city":"Oslo"}']);
    expect(final.output_text).toBe('Let me check.');
    // The SDK adds its own `parsed`/`parsed_arguments` fields to what it received.
    expect(final.output).toMatchObject(stream.final()!.response.output);
    expect(final.output).toHaveLength(3);
    expect(final.usage).toEqual(stream.final()!.response.usage);
    expect(final.status).toBe('completed');
  });

  it('a tool round trip the SDK sends decodes into canonical messages', async () => {
    let sent: ResponsesRequestBody | undefined;
    const client = new OpenAI({
      apiKey: 'test',
      baseURL: 'http://127.0.0.1:1/v1',
      maxRetries: 0,
      fetch: async (_url, init) => {
        sent = JSON.parse(String(init?.body)) as ResponsesRequestBody;
        return new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } });
      },
    });
    await client.responses.create({
      model: 'test-model',
      instructions: 'Answer briefly.',
      input: [
        { role: 'user', content: 'Weather in Oslo?' },
        { type: 'function_call', call_id: 'call_w1', name: 'weather', arguments: '{"city":"Oslo"}' },
        { type: 'function_call_output', call_id: 'call_w1', output: '{"temp":-3}' },
      ],
      tools: [
        {
          type: 'function',
          name: 'weather',
          parameters: { type: 'object', properties: { city: { type: 'string' } } },
          strict: true,
        },
      ],
    });

    const warnings: CallWarning[] = [];
    const decoded = decodeResponsesRequest(sent!, { history: [], resolveItem: () => undefined }, (warning) =>
      warnings.push(warning),
    );
    expect(warnings).toEqual([]);
    expect(decoded.options).toEqual({
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'Answer briefly.' }] },
        { role: 'user', content: [{ type: 'text', text: 'Weather in Oslo?' }] },
        {
          role: 'assistant',
          content: [{ type: 'tool-call', id: 'call_w1', name: 'weather', arguments: '{"city":"Oslo"}' }],
        },
        {
          role: 'tool',
          content: [{ type: 'tool-result', toolCallId: 'call_w1', content: [{ type: 'text', text: '{"temp":-3}' }] }],
        },
      ],
      tools: [
        { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: true },
      ],
    });
  });
});
