import { describe, expect, it } from 'vitest';
import type { ChatCallOptions } from '../../core/chat.js';
import type { CallWarning } from '../../core/call-context.js';
import { encodeChatRequest } from './encode-request.js';

const USER = { role: 'user' as const, content: [{ type: 'text' as const, text: 'hi' }] };

describe('encodeChatRequest messages', () => {
  const cases: Array<[string, { given: ChatCallOptions['messages']; want: unknown[] }]> = [
    [
      'system messages in place, even mid-conversation, text joined',
      {
        given: [
          {
            role: 'system',
            content: [
              { type: 'text', text: 'a' },
              { type: 'text', text: 'b' },
            ],
          },
          USER,
          { role: 'system', content: [{ type: 'text', text: 'late' }] },
        ],
        want: [
          { role: 'system', content: 'a\n\nb' },
          { role: 'user', content: 'hi' },
          { role: 'system', content: 'late' },
        ],
      },
    ],
    [
      'user images as image_url parts, inline data as a data URL',
      {
        given: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'compare' },
              { type: 'image', url: 'https://example.com/a.png', detail: 'high' },
              { type: 'image', data: 'iVBORw0KGgo=', mediaType: 'image/png' },
            ],
          },
        ],
        want: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'compare' },
              { type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'high' } },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            ],
          },
        ],
      },
    ],
    [
      'assistant reasoning dropped, tool calls kept, empty arguments as {}',
      {
        given: [
          {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: 'secret thoughts', signature: 'sig' },
              { type: 'tool-call', id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
              { type: 'tool-call', id: 'toolu_2', name: 'now', arguments: '' },
            ],
          },
        ],
        want: [
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
              { id: 'toolu_2', type: 'function', function: { name: 'now', arguments: '{}' } },
            ],
          },
        ],
      },
    ],
    [
      'assistant text with reasoning dropped',
      {
        given: [
          {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: 'r' },
              { type: 'text', text: 'Hel' },
              { type: 'text', text: 'lo' },
            ],
          },
        ],
        want: [{ role: 'assistant', content: 'Hello' }],
      },
    ],
    [
      'one tool message per result, tool images in a user message after the run of tool messages',
      {
        given: [
          {
            role: 'tool',
            content: [
              { type: 'tool-result', toolCallId: 'toolu_1', content: [{ type: 'text', text: '18°C' }] },
              {
                type: 'tool-result',
                toolCallId: 'toolu_2',
                content: [
                  { type: 'text', text: 'shot:' },
                  { type: 'image', data: 'AAAA', mediaType: 'image/jpeg' },
                ],
                isError: false,
              },
            ],
          },
          { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'toolu_3', content: [] }] },
          USER,
        ],
        want: [
          { role: 'tool', tool_call_id: 'toolu_1', content: '18°C' },
          { role: 'tool', tool_call_id: 'toolu_2', content: 'shot:' },
          { role: 'tool', tool_call_id: 'toolu_3', content: '' },
          { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/jpeg;base64,AAAA' } }] },
          { role: 'user', content: 'hi' },
        ],
      },
    ],
  ];
  it.each(cases)('encodes %s', (_name, { given, want }) => {
    expect(encodeChatRequest({ messages: given }, 'up', { stream: false }).messages).toEqual(want);
  });
});

describe('encodeChatRequest parameters', () => {
  const tools = [
    {
      name: 'get_weather',
      description: 'Weather',
      parameters: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' },
      strict: false,
    },
  ];

  it('encodes every option for a local upstream, asking for usage when streaming', () => {
    const options: ChatCallOptions = {
      messages: [USER],
      tools,
      toolChoice: { type: 'tool', name: 'get_weather' },
      parallelToolCalls: false,
      maxOutputTokens: 256,
      temperature: 0.3,
      topP: 0.8,
      topK: 20,
      stopSequences: ['END'],
      seed: 42,
      user: 'u-7',
      responseFormat: { type: 'json-schema', name: 'w', schema: { type: 'object' }, strict: true },
      reasoning: { effort: 'low' },
    };
    expect(encodeChatRequest(options, 'qwen3:8b', { stream: true })).toEqual({
      model: 'qwen3:8b',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
      tools: [
        {
          type: 'function',
          function: { name: 'get_weather', description: 'Weather', parameters: tools[0].parameters, strict: false },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: false,
      max_tokens: 256,
      temperature: 0.3,
      top_p: 0.8,
      top_k: 20,
      stop: ['END'],
      seed: 42,
      user: 'u-7',
      response_format: { type: 'json_schema', json_schema: { name: 'w', schema: { type: 'object' }, strict: true } },
      reasoning_effort: 'low',
    });
  });

  it('uses max_completion_tokens and drops top_k with a warning for OpenAI itself', () => {
    const warnings: CallWarning[] = [];
    const body = encodeChatRequest(
      { messages: [USER], maxOutputTokens: 100, topK: 5, reasoning: { budgetTokens: 2048 } },
      'o4-mini',
      {
        stream: false,
        dialect: { maxTokensField: 'max_completion_tokens', topK: false },
        warn: (warning) => warnings.push(warning),
      },
    );
    expect(body).toEqual({
      model: 'o4-mini',
      messages: [{ role: 'user', content: 'hi' }],
      stream: false,
      max_completion_tokens: 100,
    });
    expect(warnings.map((warning) => warning.field)).toEqual(['top_k', 'reasoning.budget_tokens']);
  });

  it('sends tool_choice and parallel_tool_calls only together with tools', () => {
    const body = encodeChatRequest({ messages: [USER], toolChoice: { type: 'none' }, parallelToolCalls: true }, 'm', {
      stream: false,
    });
    expect(body).toEqual({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: false });
  });

  it.each([
    [{ type: 'auto' } as const, 'auto'],
    [{ type: 'none' } as const, 'none'],
    [{ type: 'required' } as const, 'required'],
  ])('encodes tool_choice %j as %s', (given, want) => {
    expect(encodeChatRequest({ messages: [USER], tools, toolChoice: given }, 'm', { stream: false }).tool_choice).toBe(
      want,
    );
  });

  it.each([
    [{ type: 'text' } as const, { type: 'text' }],
    [{ type: 'json' } as const, { type: 'json_object' }],
  ])('encodes response format %j', (given, want) => {
    expect(
      encodeChatRequest({ messages: [USER], responseFormat: given }, 'm', { stream: false }).response_format,
    ).toEqual(want);
  });
});
