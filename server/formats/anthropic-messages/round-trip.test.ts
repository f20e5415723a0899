/**
 * The codec's two directions are inverses where the wire allows: what the upstream direction encodes, our
 * dialect direction decodes back unchanged, and an answer or stream encoded for a caller decodes back to the
 * same canonical content.
 */
import { describe, expect, it } from 'vitest';
import { collectStream } from '../../core/collect-stream.js';
import type { ChatCallOptions, ChatResult, ChatStreamPart } from '../../core/chat.js';
import type { CallWarning } from '../../core/call-context.js';
import { decodeMessagesRequest } from './decode-request.js';
import { decodeMessage } from './decode-response.js';
import { decodeMessagesStream } from './decode-stream.js';
import { encodeMessagesRequest } from './encode-request.js';
import { encodeMessage } from './encode-response.js';
import { encodeMessagesStream } from './encode-stream.js';

const TOOL_CONVERSATION: ChatCallOptions = {
  messages: [
    { role: 'system', content: [{ type: 'text', text: 'You can read files and check the weather.' }] },
    { role: 'user', content: [{ type: 'text', text: 'What is in notes.txt, and the weather in Paris?' }] },
    {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'Two tools needed.', signature: 'EqQBCgIYAhIMsig1' },
        { type: 'text', text: 'Let me check both.' },
        { type: 'tool-call', id: 'toolu_01A', name: 'Read', arguments: '{"file_path":"/w/notes.txt"}' },
        { type: 'tool-call', id: 'toolu_01B', name: 'get_weather', arguments: '{"location":"Paris","unit":"celsius"}' },
      ],
    },
    {
      role: 'tool',
      content: [
        { type: 'tool-result', toolCallId: 'toolu_01A', content: [{ type: 'text', text: '1\tbuy plums\n' }] },
        {
          type: 'tool-result',
          toolCallId: 'toolu_01B',
          content: [
            { type: 'text', text: 'service down' },
            { type: 'image', data: 'iVBORw0KGgo=', mediaType: 'image/png' },
          ],
          isError: true,
        },
      ],
    },
    { role: 'user', content: [{ type: 'text', text: 'Try the weather again.' }] },
    {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: '', redactedData: 'EmwKAhgBredacted' },
        { type: 'tool-call', id: 'toolu_01C', name: 'get_weather', arguments: '{"location":"Paris"}' },
      ],
    },
    {
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: 'toolu_01C', content: [{ type: 'text', text: '18°C, sunny' }] }],
    },
  ],
  tools: [
    {
      name: 'Read',
      description: 'Reads a file',
      parameters: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] },
    },
    {
      name: 'get_weather',
      parameters: {
        type: 'object',
        properties: { location: { type: 'string' }, unit: { enum: ['celsius', 'fahrenheit'] } },
      },
    },
  ],
  toolChoice: { type: 'auto' },
  maxOutputTokens: 2048,
  temperature: 1,
  stopSequences: ['STOP'],
  user: 'user-7',
  reasoning: { budgetTokens: 1024 },
};

describe('round trips', () => {
  it('decodeMessagesRequest(encodeMessagesRequest(x)) gives back a multi-turn tool conversation', () => {
    const warnings: CallWarning[] = [];
    const wire = encodeMessagesRequest(TOOL_CONVERSATION, 'claude-sonnet-4-5', {
      stream: true,
      warn: (warning) => warnings.push(warning),
    });
    const decoded = decodeMessagesRequest(JSON.parse(JSON.stringify(wire)), (warning) => warnings.push(warning));
    expect(decoded.model).toBe('claude-sonnet-4-5');
    expect(decoded.stream).toBe(true);
    // Everything comes back but the end-user id, which is not handed from Anthropic's metadata to other vendors.
    const { user, ...withoutUser } = TOOL_CONVERSATION;
    expect(user).toBe('user-7');
    expect(decoded.options).toEqual(withoutUser);
    expect(warnings.map((warning) => warning.field)).toEqual(['metadata.user_id']);
  });

  it('decodeMessage(encodeMessage(x)) gives back a result', () => {
    const result: ChatResult = {
      content: [
        { type: 'reasoning', text: 'Plan.', signature: 'EqQBsig' },
        { type: 'text', text: 'Reading.' },
        { type: 'tool-call', id: 'toolu_1', name: 'Read', arguments: '{"file_path":"/w/a.txt","limit":5}' },
      ],
      finishReason: 'tool-calls',
      usage: { inputTokens: 3860, outputTokens: 140, cacheReadTokens: 1800, cacheWriteTokens: 2048 },
    };
    expect(decodeMessage(JSON.parse(JSON.stringify(encodeMessage(result, { id: 'msg_1', model: 'm' }))))).toEqual(
      result,
    );
  });

  it('decodeMessagesStream(encodeMessagesStream(x)) gives back the same content and usage', async () => {
    const fragments = ['{"file_', 'path": "/w', '/a.txt", ', '"limit"', ': 5}'];
    const parts: ChatStreamPart[] = [
      { type: 'reasoning-delta', text: 'Plan' },
      { type: 'reasoning-delta', text: ' it.' },
      { type: 'reasoning-end', signature: 'EqQBsig' },
      { type: 'text-delta', text: 'Reading' },
      { type: 'text-delta', text: ' now.' },
      { type: 'tool-call-start', index: 0, id: 'toolu_1', name: 'Read' },
      ...fragments.map((fragment): ChatStreamPart => ({ type: 'tool-call-delta', index: 0, argumentsDelta: fragment })),
      { type: 'tool-call-end', index: 0 },
      {
        type: 'finish',
        finishReason: 'tool-calls',
        usage: { inputTokens: 3860, outputTokens: 140, cacheReadTokens: 1800, cacheWriteTokens: 2048 },
      },
    ];
    async function* source(): AsyncGenerator<ChatStreamPart> {
      yield* parts;
    }
    async function* framed() {
      for await (const event of encodeMessagesStream(source(), {
        id: 'msg_1',
        model: 'm',
        inputTokens: 3860,
        cacheReadTokens: 1800,
        cacheWriteTokens: 2048,
      })) {
        yield { event: event.event, data: JSON.parse(JSON.stringify(event.data)) as unknown };
      }
    }
    const decodedParts: ChatStreamPart[] = [];
    for await (const part of decodeMessagesStream(framed())) {
      decodedParts.push(part);
    }
    expect(decodedParts).toEqual(parts);
    expect(await collectStream(source())).toEqual(
      await collectStream(
        (async function* () {
          yield* decodedParts;
        })(),
      ),
    );
  });
});
