import { describe, expect, it } from 'vitest';
import type { ChatResult } from '../../core/chat.js';
import { encodeResponse } from './encode-response.js';
import { testMeta } from '../../../test/helpers/responses-meta.js';
import type { OutputItem, ResponseObject } from './wire-types.js';

const usage = { inputTokens: 1200, outputTokens: 80, cacheReadTokens: 1024, reasoningTokens: 30 };

describe('encodeResponse', () => {
  it('encodes a text answer as one completed message with output_text and detailed usage', () => {
    const result: ChatResult = { content: [{ type: 'text', text: 'Hello there.' }], finishReason: 'stop', usage };
    const want: ResponseObject = {
      id: 'resp_test1',
      object: 'response',
      created_at: 1_760_000_000,
      completed_at: 1_760_000_003,
      status: 'completed',
      error: null,
      incomplete_details: null,
      instructions: 'Be kind.',
      max_output_tokens: 500,
      metadata: { trace: 't1' },
      model: 'test-model',
      output: [
        {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'Hello there.', annotations: [], logprobs: [] }],
        },
      ],
      output_text: 'Hello there.',
      parallel_tool_calls: false,
      previous_response_id: 'resp_prev',
      reasoning: { effort: 'low', summary: null },
      store: true,
      temperature: 0.5,
      text: { format: { type: 'text' } },
      tool_choice: 'auto',
      tools: [],
      top_p: 1,
      truncation: 'disabled',
      usage: {
        input_tokens: 1200,
        input_tokens_details: { cached_tokens: 1024 },
        output_tokens: 80,
        output_tokens_details: { reasoning_tokens: 30 },
        total_tokens: 1280,
      },
    };
    const meta = testMeta({
      instructions: 'Be kind.',
      maxOutputTokens: 500,
      metadata: { trace: 't1' },
      parallelToolCalls: false,
      previousResponseId: 'resp_prev',
      reasoning: { effort: 'low', summary: null },
      temperature: 0.5,
      topP: 1,
    });
    expect(encodeResponse(result, meta)).toEqual(want);
  });

  const cases: Array<[string, { given: ChatResult; output: OutputItem[]; more?: Partial<ResponseObject> }]> = [
    [
      'reasoning, text and parallel tool calls become items in content order',
      {
        given: {
          content: [
            { type: 'reasoning', text: 'Need two cities.' },
            { type: 'text', text: 'Checking ' },
            { type: 'text', text: 'both.' },
            { type: 'tool-call', id: 'call_a', name: 'weather', arguments: '{"city":"Oslo"}' },
            { type: 'tool-call', id: 'call_b', name: 'weather', arguments: '{"city":"Rome"}' },
          ],
          finishReason: 'tool-calls',
          usage,
        },
        output: [
          { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'Need two cities.' }] },
          {
            id: 'msg_2',
            type: 'message',
            role: 'assistant',
            status: 'completed',
            content: [{ type: 'output_text', text: 'Checking both.', annotations: [], logprobs: [] }],
          },
          {
            id: 'fc_3',
            type: 'function_call',
            status: 'completed',
            call_id: 'call_a',
            name: 'weather',
            arguments: '{"city":"Oslo"}',
          },
          {
            id: 'fc_4',
            type: 'function_call',
            status: 'completed',
            call_id: 'call_b',
            name: 'weather',
            arguments: '{"city":"Rome"}',
          },
        ],
        more: { status: 'completed', output_text: 'Checking both.' },
      },
    ],
    [
      'a length stop is incomplete with max_output_tokens and an incomplete last message',
      {
        given: { content: [{ type: 'text', text: 'Once upon a' }], finishReason: 'length', usage },
        output: [
          {
            id: 'msg_1',
            type: 'message',
            role: 'assistant',
            status: 'incomplete',
            content: [{ type: 'output_text', text: 'Once upon a', annotations: [], logprobs: [] }],
          },
        ],
        more: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, completed_at: null },
      },
    ],
    [
      'a content filter stop is incomplete with content_filter',
      {
        given: { content: [], finishReason: 'content-filter', usage },
        output: [],
        more: { status: 'incomplete', incomplete_details: { reason: 'content_filter' }, output_text: '' },
      },
    ],
    [
      'an error stop is failed with a server_error',
      {
        given: { content: [{ type: 'text', text: 'Part' }], finishReason: 'error', usage },
        output: [
          {
            id: 'msg_1',
            type: 'message',
            role: 'assistant',
            status: 'completed',
            content: [{ type: 'output_text', text: 'Part', annotations: [], logprobs: [] }],
          },
        ],
        more: {
          status: 'failed',
          error: { code: 'server_error', message: 'The model stopped with an error.' },
          completed_at: null,
        },
      },
    ],
    [
      'opaque reasoning state goes into encrypted_content; empty reasoning and empty text are skipped',
      {
        given: {
          content: [
            { type: 'reasoning', text: 'thinking', signature: 'sig==' },
            { type: 'reasoning', text: '', redactedData: 'cmVk' },
            { type: 'reasoning', text: '', encryptedContent: 'gAAAA-openai' },
            { type: 'reasoning', text: '' },
            { type: 'text', text: '' },
          ],
          finishReason: 'stop',
          usage,
        },
        output: [
          {
            id: 'rs_1',
            type: 'reasoning',
            summary: [{ type: 'summary_text', text: 'thinking' }],
            encrypted_content: 'omnigate.anthropic-signature:sig==',
          },
          { id: 'rs_2', type: 'reasoning', summary: [], encrypted_content: 'omnigate.anthropic-redacted:cmVk' },
          { id: 'rs_3', type: 'reasoning', summary: [], encrypted_content: 'gAAAA-openai' },
        ],
      },
    ],
    [
      'text after a tool call is a new message; item ids a provider kept are reused',
      {
        given: {
          content: [
            { type: 'text', text: 'A' },
            { type: 'tool-call', id: 'call_1', name: 'f', arguments: '{}', itemId: 'fc_upstream' },
            { type: 'text', text: 'B' },
          ],
          finishReason: 'stop',
          usage: { inputTokens: 5, outputTokens: 2 },
        },
        output: [
          {
            id: 'msg_1',
            type: 'message',
            role: 'assistant',
            status: 'completed',
            content: [{ type: 'output_text', text: 'A', annotations: [], logprobs: [] }],
          },
          {
            id: 'fc_upstream',
            type: 'function_call',
            status: 'completed',
            call_id: 'call_1',
            name: 'f',
            arguments: '{}',
          },
          {
            id: 'msg_2',
            type: 'message',
            role: 'assistant',
            status: 'completed',
            content: [{ type: 'output_text', text: 'B', annotations: [], logprobs: [] }],
          },
        ],
        more: {
          output_text: 'AB',
          usage: {
            input_tokens: 5,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens: 2,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: 7,
          },
        },
      },
    ],
  ];

  it.each(cases)('%s', (_name, { given, output, more }) => {
    const response = encodeResponse(given, testMeta());
    expect(response.output).toEqual(output);
    if (more) {
      expect(response).toMatchObject(more);
    }
  });

  it('names the namespace on a call of a namespaced tool, and puts no namespace key on a plain one', () => {
    const result: ChatResult = {
      content: [
        { type: 'tool-call', id: 'call_w', name: 'wait_agent', arguments: '{"targets":["nobody"],"timeout_ms":10}' },
        { type: 'tool-call', id: 'call_e', name: 'exec_command', arguments: '{"cmd":"ls"}' },
      ],
      finishReason: 'tool-calls',
      usage,
    };
    const response = encodeResponse(result, testMeta({ toolNamespaces: new Map([['wait_agent', 'multi_agent_v1']]) }));
    expect(response.output).toStrictEqual([
      {
        id: 'fc_1',
        type: 'function_call',
        status: 'completed',
        call_id: 'call_w',
        name: 'wait_agent',
        namespace: 'multi_agent_v1',
        arguments: '{"targets":["nobody"],"timeout_ms":10}',
      },
      {
        id: 'fc_2',
        type: 'function_call',
        status: 'completed',
        call_id: 'call_e',
        name: 'exec_command',
        arguments: '{"cmd":"ls"}',
      },
    ]);
    expect(Object.keys(response.output[1])).not.toContain('namespace');
  });
});
