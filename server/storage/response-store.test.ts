import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { conversationAfterTurn } from '../formats/openai-responses/conversation.js';
import { decodeResponsesRequest } from '../formats/openai-responses/decode-request.js';
import { encodeResponse } from '../formats/openai-responses/encode-response.js';
import { testMeta } from '../../test/helpers/responses-meta.js';
import type { ResponseObject, ResponsesRequestBody } from '../formats/openai-responses/wire-types.js';
import type { ChatMessage, ChatResult } from '../core/chat.js';
import { openDatabase, type SqliteDatabase } from './database.js';
import { createResponseStore, type ResponseStore } from './response-store.js';

const conversation: ChatMessage[] = [
  { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
  { role: 'assistant', content: [{ type: 'text', text: 'Hello!' }] },
];

function response(id: string): ResponseObject {
  return encodeResponse(
    {
      content: [
        { type: 'text', text: 'Hello!' },
        { type: 'tool-call', id: 'call_1', name: 'f', arguments: '{"a":1}' },
      ],
      finishReason: 'tool-calls',
      usage: { inputTokens: 3, outputTokens: 4 },
    },
    testMeta({ id, generateId: (prefix) => `${prefix}_${id}` }),
  );
}

const databases: Array<[string, () => SqliteDatabase]> = [
  ['a plain in-memory database', () => new Database(':memory:')],
  ['the server database settings (foreign keys on)', () => openDatabase(':memory:')],
];

describe.each(databases)('response store on %s', (_name, open) => {
  function store(): ResponseStore {
    return createResponseStore(open());
  }

  it('returns a saved response and conversation to the key that saved it, and nothing to another key', async () => {
    const responses = store();
    const saved = response('resp_a');
    await responses.save({
      id: 'resp_a',
      keyId: 'key_1',
      createdAt: 100,
      response: saved,
      conversation,
      inputItems: [{ role: 'user', content: 'Hi' }],
    });
    expect(await responses.get('resp_a', 'key_1')).toEqual({
      response: saved,
      conversation,
      inputItems: [{ role: 'user', content: 'Hi' }],
    });
    expect(await responses.get('resp_a', 'key_2')).toBeUndefined();
    expect(await responses.get('resp_missing', 'key_1')).toBeUndefined();
  });

  it('finds output items by id for item_reference, scoped to the key', async () => {
    const responses = store();
    await responses.save({ id: 'resp_a', keyId: 'key_1', createdAt: 100, response: response('resp_a'), conversation });
    expect(await responses.getItem('msg_resp_a', 'key_1')).toEqual({
      id: 'msg_resp_a',
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: 'Hello!', annotations: [], logprobs: [] }],
    });
    expect(await responses.getItem('fc_resp_a', 'key_1')).toEqual({
      id: 'fc_resp_a',
      type: 'function_call',
      status: 'completed',
      call_id: 'call_1',
      name: 'f',
      arguments: '{"a":1}',
    });
    expect(await responses.getItem('fc_resp_a', 'key_2')).toBeUndefined();
    expect(await responses.getItem('fc_unknown', 'key_1')).toBeUndefined();
  });

  it('deletes only the owner key’s response, with its items', async () => {
    const responses = store();
    await responses.save({ id: 'resp_a', keyId: 'key_1', createdAt: 100, response: response('resp_a'), conversation });
    expect(await responses.delete('resp_a', 'key_2')).toBe(false);
    expect(await responses.get('resp_a', 'key_1')).toBeDefined();
    expect(await responses.delete('resp_a', 'key_1')).toBe(true);
    expect(await responses.get('resp_a', 'key_1')).toBeUndefined();
    expect(await responses.getItem('msg_resp_a', 'key_1')).toBeUndefined();
    expect(await responses.delete('resp_a', 'key_1')).toBe(false);
  });

  it('purges responses older than a time, with their items', async () => {
    const responses = store();
    await responses.save({
      id: 'resp_old',
      keyId: 'key_1',
      createdAt: 100,
      response: response('resp_old'),
      conversation,
    });
    await responses.save({
      id: 'resp_new',
      keyId: 'key_1',
      createdAt: 200,
      response: response('resp_new'),
      conversation,
    });
    expect(await responses.deleteOlderThan(150)).toBe(1);
    expect(await responses.get('resp_old', 'key_1')).toBeUndefined();
    expect(await responses.getItem('fc_resp_old', 'key_1')).toBeUndefined();
    expect(await responses.get('resp_new', 'key_1')).toBeDefined();
  });

  it('creates its tables idempotently on the same database', async () => {
    const db = open();
    await createResponseStore(db).save({
      id: 'resp_a',
      keyId: 'key_1',
      createdAt: 1,
      response: response('resp_a'),
      conversation,
    });
    expect((await createResponseStore(db).get('resp_a', 'key_1'))?.conversation).toEqual(conversation);
  });

  it('chains many turns with tool calls through previous_response_id and item_reference', async () => {
    const responses = store();
    const keyId = 'key_1';
    let clock = 1000;
    let ids = 0;

    /** One turn as the route runs it: load history, decode, "generate", encode, store. */
    async function turn(body: Omit<ResponsesRequestBody, 'model'>, result: ChatResult) {
      const previous = body.previous_response_id ? await responses.get(body.previous_response_id, keyId) : undefined;
      const history = previous?.conversation ?? [];
      // The route reads the referenced items before decoding (the decoder does no I/O); so does this turn.
      const referenced = new Map<string, unknown>();
      for (const item of Array.isArray(body.input) ? (body.input as Array<{ type?: string; id?: string }>) : []) {
        if (item.type === 'item_reference' && item.id) {
          referenced.set(item.id, await responses.getItem(item.id, keyId));
        }
      }
      const decoded = decodeResponsesRequest(
        { model: 'm', ...body },
        { history, resolveItem: (id) => referenced.get(id) },
        () => undefined,
      );
      const id = `resp_${++clock}`;
      const encoded = encodeResponse(result, {
        ...testMeta({ id, createdAt: clock }),
        ...decoded.echo,
        generateId: (prefix) => `${prefix}_${++ids}`,
      });
      await responses.save({
        id,
        keyId,
        createdAt: clock,
        response: encoded,
        conversation: conversationAfterTurn(history, decoded.inputMessages, encoded),
      });
      return { options: decoded.options, response: encoded };
    }

    const usage = { inputTokens: 10, outputTokens: 5 };
    const first = await turn(
      { instructions: 'You are a weather bot.', input: 'Weather in Oslo and Rome?' },
      {
        content: [
          { type: 'reasoning', text: 'Two lookups.', signature: 'sig-1' },
          { type: 'tool-call', id: 'call_o', name: 'weather', arguments: '{"city":"Oslo"}' },
          { type: 'tool-call', id: 'call_r', name: 'weather', arguments: '{"city":"Rome"}' },
        ],
        finishReason: 'tool-calls',
        usage,
      },
    );
    expect(first.response.output.map((item) => item.id)).toEqual(['rs_1', 'fc_2', 'fc_3']);

    const second = await turn(
      {
        previous_response_id: first.response.id,
        input: [
          { type: 'function_call_output', call_id: 'call_o', output: '-3' },
          { type: 'function_call_output', call_id: 'call_r', output: '14' },
        ],
      },
      { content: [{ type: 'text', text: 'Oslo -3, Rome 14.' }], finishReason: 'stop', usage },
    );
    const assistantWithCalls: ChatMessage = {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'Two lookups.', signature: 'sig-1', itemId: 'rs_1' },
        { type: 'tool-call', id: 'call_o', name: 'weather', arguments: '{"city":"Oslo"}', itemId: 'fc_2' },
        { type: 'tool-call', id: 'call_r', name: 'weather', arguments: '{"city":"Rome"}', itemId: 'fc_3' },
      ],
    };
    const toolResults: ChatMessage = {
      role: 'tool',
      content: [
        { type: 'tool-result', toolCallId: 'call_o', content: [{ type: 'text', text: '-3' }] },
        { type: 'tool-result', toolCallId: 'call_r', content: [{ type: 'text', text: '14' }] },
      ],
    };
    // Instructions are not inherited from the previous response.
    expect(second.options.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Oslo and Rome?' }] },
      assistantWithCalls,
      toolResults,
    ]);

    const third = await turn(
      { previous_response_id: second.response.id, instructions: 'Be brief.', input: 'And tomorrow?' },
      { content: [{ type: 'text', text: 'Similar.' }], finishReason: 'stop', usage },
    );
    expect(third.options.messages).toEqual([
      { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
      { role: 'user', content: [{ type: 'text', text: 'Weather in Oslo and Rome?' }] },
      assistantWithCalls,
      toolResults,
      { role: 'assistant', content: [{ type: 'text', text: 'Oslo -3, Rome 14.' }] },
      { role: 'user', content: [{ type: 'text', text: 'And tomorrow?' }] },
    ]);
    // The stored conversation is the next turn's history: everything but this turn's instructions, plus the answer.
    expect((await responses.get(third.response.id, keyId))?.conversation).toEqual([
      ...third.options.messages.slice(1),
      { role: 'assistant', content: [{ type: 'text', text: 'Similar.' }] },
    ]);

    // Without previous_response_id, a client (Vercel AI SDK) replays earlier output by item_reference.
    const replay = await turn(
      {
        input: [
          { role: 'user', content: 'Weather in Oslo and Rome?' },
          { type: 'item_reference', id: 'rs_1' },
          { type: 'item_reference', id: 'fc_2' },
          { type: 'item_reference', id: 'fc_3' },
          { type: 'function_call_output', call_id: 'call_o', output: '-3' },
          { type: 'function_call_output', call_id: 'call_r', output: '14' },
        ],
      },
      { content: [{ type: 'text', text: 'Done.' }], finishReason: 'stop', usage },
    );
    expect(replay.options.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Oslo and Rome?' }] },
      assistantWithCalls,
      toolResults,
    ]);
  });
});
