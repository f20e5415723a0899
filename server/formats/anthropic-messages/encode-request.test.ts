import { describe, expect, it } from 'vitest';
import type { ChatCallOptions } from '../../core/chat.js';
import type { CallWarning } from '../../core/call-context.js';
import { encodeCountTokensRequest, encodeMessagesRequest } from './encode-request.js';
import type { AnthropicUpstreamRequest } from './wire-types.js';

function encode(options: ChatCallOptions, stream = false) {
  const warnings: CallWarning[] = [];
  const body = encodeMessagesRequest(options, 'claude-sonnet-4-5-20250929', {
    stream,
    warn: (warning) => warnings.push(warning),
  });
  return { body, warnings, fields: warnings.map((warning) => warning.field) };
}

const user = (text: string): ChatCallOptions['messages'][number] => ({
  role: 'user',
  content: [{ type: 'text', text }],
});

describe('encodeMessagesRequest: messages', () => {
  const cases: Array<
    [string, { given: ChatCallOptions['messages']; want: Pick<AnthropicUpstreamRequest, 'messages' | 'system'> }]
  > = [
    [
      'system messages anywhere are hoisted into top-level system blocks, in order',
      {
        given: [
          { role: 'system', content: [{ type: 'text', text: 'You are terse.' }] },
          user('Hi'),
          {
            role: 'system',
            content: [
              { type: 'text', text: 'Environment: linux' },
              { type: 'text', text: '' },
            ],
          },
          { role: 'assistant', content: [{ type: 'text', text: 'Hello.' }] },
          { role: 'system', content: [{ type: 'text', text: 'Agent types: general' }] },
          user('Bye'),
        ],
        want: {
          system: [
            { type: 'text', text: 'You are terse.' },
            { type: 'text', text: 'Environment: linux' },
            { type: 'text', text: 'Agent types: general' },
          ],
          messages: [
            { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
            { role: 'assistant', content: [{ type: 'text', text: 'Hello.' }] },
            { role: 'user', content: [{ type: 'text', text: 'Bye' }] },
          ],
        },
      },
    ],
    [
      'tool results become a user message merged with the following user message, results first',
      {
        given: [
          user('Weather in Paris and Rome?'),
          {
            role: 'assistant',
            content: [
              { type: 'tool-call', id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
              { type: 'tool-call', id: 'toolu_2', name: 'get_weather', arguments: '{"city":"Rome"}' },
            ],
          },
          {
            role: 'tool',
            content: [
              { type: 'tool-result', toolCallId: 'toolu_1', content: [{ type: 'text', text: '18°C' }] },
              {
                type: 'tool-result',
                toolCallId: 'toolu_2',
                content: [{ type: 'text', text: 'no data' }],
                isError: true,
              },
            ],
          },
          user('And tomorrow?'),
        ],
        want: {
          messages: [
            { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Rome?' }] },
            {
              role: 'assistant',
              content: [
                { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
                { type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: { city: 'Rome' } },
              ],
            },
            {
              role: 'user',
              content: [
                { type: 'tool_result', tool_use_id: 'toolu_1', content: '18°C' },
                { type: 'tool_result', tool_use_id: 'toolu_2', content: 'no data', is_error: true },
                { type: 'text', text: 'And tomorrow?' },
              ],
            },
          ],
        },
      },
    ],
    [
      'a user message before tool results is merged with them, results still first',
      {
        given: [
          { role: 'assistant', content: [{ type: 'tool-call', id: 'toolu_1', name: 'f', arguments: '{}' }] },
          user('note'),
          { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'toolu_1', content: [] }] },
        ],
        want: {
          messages: [
            { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'f', input: {} }] },
            {
              role: 'user',
              content: [
                { type: 'tool_result', tool_use_id: 'toolu_1' },
                { type: 'text', text: 'note' },
              ],
            },
          ],
        },
      },
    ],
    [
      'consecutive same-role messages merge; empty ones vanish',
      {
        given: [
          user('a'),
          user(''),
          user('b'),
          { role: 'assistant', content: [{ type: 'reasoning', text: 'unsigned' }] },
          { role: 'assistant', content: [{ type: 'text', text: 'c' }] },
          { role: 'assistant', content: [{ type: 'text', text: 'd' }] },
        ],
        want: {
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'a' },
                { type: 'text', text: 'b' },
              ],
            },
            {
              role: 'assistant',
              content: [
                { type: 'text', text: 'c' },
                { type: 'text', text: 'd' },
              ],
            },
          ],
        },
      },
    ],
    [
      'reasoning goes back only with a signature or redacted data',
      {
        given: [
          user('q'),
          {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: 'signed thought', signature: 'EqQBsig' },
              { type: 'reasoning', text: '', redactedData: 'EmwKdata' },
              { type: 'reasoning', text: 'foreign thought from another provider' },
              { type: 'text', text: 'answer' },
            ],
          },
        ],
        want: {
          messages: [
            { role: 'user', content: [{ type: 'text', text: 'q' }] },
            {
              role: 'assistant',
              content: [
                { type: 'thinking', thinking: 'signed thought', signature: 'EqQBsig' },
                { type: 'redacted_thinking', data: 'EmwKdata' },
                { type: 'text', text: 'answer' },
              ],
            },
          ],
        },
      },
    ],
    [
      'images: inline base64, data URL, http URL; tool results with images are block arrays',
      {
        given: [
          {
            role: 'user',
            content: [
              { type: 'image', data: 'iVBORw0KGgo=', mediaType: 'image/png' },
              { type: 'image', url: 'data:image/jpeg;base64,/9j/4AAQ' },
              { type: 'image', url: 'https://example.com/cat.webp', detail: 'high' },
            ],
          },
          { role: 'assistant', content: [{ type: 'tool-call', id: 'toolu_s', name: 'screenshot', arguments: '{}' }] },
          {
            role: 'tool',
            content: [
              {
                type: 'tool-result',
                toolCallId: 'toolu_s',
                content: [
                  { type: 'text', text: 'here' },
                  { type: 'image', data: 'R0lGOD', mediaType: 'image/gif' },
                ],
              },
            ],
          },
        ],
        want: {
          messages: [
            {
              role: 'user',
              content: [
                { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
                { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/4AAQ' } },
                { type: 'image', source: { type: 'url', url: 'https://example.com/cat.webp' } },
              ],
            },
            { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_s', name: 'screenshot', input: {} }] },
            {
              role: 'user',
              content: [
                {
                  type: 'tool_result',
                  tool_use_id: 'toolu_s',
                  content: [
                    { type: 'text', text: 'here' },
                    { type: 'image', source: { type: 'base64', media_type: 'image/gif', data: 'R0lGOD' } },
                  ],
                },
              ],
            },
          ],
        },
      },
    ],
  ];

  it.each(cases)('%s', (_name, { given, want }) => {
    const { body } = encode({ messages: given });
    expect({ system: body.system, messages: body.messages }).toEqual({ system: undefined, ...want });
  });
});

describe('encodeMessagesRequest: parameters', () => {
  it('defaults max_tokens to 4096 and sends only what was given', () => {
    expect(encode({ messages: [user('Hi')] }).body).toEqual({
      model: 'claude-sonnet-4-5-20250929',
      max_tokens: 4096,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
    });
  });

  it('maps every supported option', () => {
    const schema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { q: { type: 'string' } },
      additionalProperties: false,
    };
    const { body, fields } = encode(
      {
        messages: [user('Hi')],
        tools: [{ name: 'search', description: 'Search the web', parameters: schema }],
        toolChoice: { type: 'required' },
        parallelToolCalls: false,
        maxOutputTokens: 500,
        temperature: 0.2,
        topP: 0.8,
        topK: 5,
        stopSequences: ['###'],
        user: 'user-42',
        responseFormat: { type: 'json-schema', name: 'answer', schema: { type: 'object' } },
      },
      true,
    );
    expect(body).toEqual({
      model: 'claude-sonnet-4-5-20250929',
      max_tokens: 500,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
      tools: [{ name: 'search', description: 'Search the web', input_schema: schema }],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      temperature: 0.2,
      top_p: 0.8,
      top_k: 5,
      stop_sequences: ['###'],
      output_config: { format: { type: 'json_schema', schema: { type: 'object' } } },
      metadata: { user_id: 'user-42' },
      stream: true,
    });
    expect(body.tools?.[0].input_schema).toBe(schema);
    expect(fields).toEqual([]);
  });

  const toolChoices: Array<[string, { given: Partial<ChatCallOptions>; want: unknown }]> = [
    ['auto', { given: { toolChoice: { type: 'auto' } }, want: { type: 'auto' } }],
    ['none', { given: { toolChoice: { type: 'none' } }, want: { type: 'none' } }],
    ['named tool', { given: { toolChoice: { type: 'tool', name: 'f' } }, want: { type: 'tool', name: 'f' } }],
    [
      'no choice but no parallel calls',
      { given: { parallelToolCalls: false }, want: { type: 'auto', disable_parallel_tool_use: true } },
    ],
    ['nothing', { given: {}, want: undefined }],
  ];
  it.each(toolChoices)('tool_choice: %s', (_name, { given, want }) => {
    const { body } = encode({
      messages: [user('Hi')],
      tools: [{ name: 'f', parameters: { type: 'object' } }],
      ...given,
    });
    expect(body.tool_choice).toEqual(want);
  });

  it('warns about what Anthropic cannot take', () => {
    const { body, warnings } = encode({
      messages: [user('Hi')],
      seed: 7,
      responseFormat: { type: 'json' },
      tools: [{ name: 'f', parameters: { type: 'object' }, strict: true }],
    });
    expect(body.tools).toEqual([{ name: 'f', input_schema: { type: 'object' } }]);
    expect(body.output_config).toBeUndefined();
    expect(warnings.map((warning) => warning.field)).toEqual(['tools.strict', 'response_format', 'seed']);
  });
});

describe('encodeMessagesRequest: thinking', () => {
  const cases: Array<
    [string, { given: Partial<ChatCallOptions>; want: Partial<AnthropicUpstreamRequest>; warned?: string[] }]
  > = [
    [
      'a budget is sent as given, max_tokens leaves 4096 for the answer',
      {
        given: { reasoning: { budgetTokens: 10000 } },
        want: { thinking: { type: 'enabled', budget_tokens: 10000 }, max_tokens: 14096 },
      },
    ],
    [
      'a budget with the caller max tokens',
      {
        given: { reasoning: { budgetTokens: 2048 }, maxOutputTokens: 8000 },
        want: { thinking: { type: 'enabled', budget_tokens: 2048 }, max_tokens: 8000 },
      },
    ],
    [
      'effort high → budget',
      {
        given: { reasoning: { effort: 'high' } },
        want: { thinking: { type: 'enabled', budget_tokens: 8192 }, max_tokens: 12288 },
      },
    ],
    [
      'effort fits in half the caller max tokens',
      {
        given: { reasoning: { effort: 'high' }, maxOutputTokens: 6000 },
        want: { thinking: { type: 'enabled', budget_tokens: 3000 }, max_tokens: 6000 },
      },
    ],
    [
      'too few max tokens for thinking',
      {
        given: { reasoning: { effort: 'low' }, maxOutputTokens: 1500 },
        want: { thinking: undefined, max_tokens: 1500 },
        warned: ['reasoning'],
      },
    ],
    [
      'effort none → no thinking',
      { given: { reasoning: { effort: 'none' } }, want: { thinking: undefined, max_tokens: 4096 } },
    ],
    ['no effort → adaptive', { given: { reasoning: {} }, want: { thinking: { type: 'adaptive' }, max_tokens: 4096 } }],
    [
      'sampling the API refuses with thinking is dropped',
      {
        given: { reasoning: { budgetTokens: 1024 }, temperature: 0.5, topK: 3, topP: 0.5 },
        want: {
          thinking: { type: 'enabled', budget_tokens: 1024 },
          temperature: undefined,
          top_k: undefined,
          top_p: undefined,
        },
        warned: ['temperature', 'top_p', 'top_k'],
      },
    ],
    [
      'temperature 1 and top_p 0.95 are allowed with thinking',
      {
        given: { reasoning: { budgetTokens: 1024 }, temperature: 1, topP: 0.95 },
        want: { temperature: 1, top_p: 0.95 },
      },
    ],
  ];
  it.each(cases)('%s', (_name, { given, want, warned = [] }) => {
    const { body, fields } = encode({ messages: [user('Hi')], ...given });
    const picked = Object.fromEntries(Object.keys(want).map((key) => [key, body[key as keyof typeof body]]));
    expect(picked).toEqual(want);
    expect(fields).toEqual(warned);
  });

  it('turns thinking off when a tool loop continues an unsigned tool call', () => {
    const { body, fields } = encode({
      reasoning: { effort: 'medium' },
      messages: [
        user('Read a.txt'),
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'from another provider' },
            { type: 'tool-call', id: 'call_1', name: 'Read', arguments: '{"file_path":"a.txt"}' },
          ],
        },
        {
          role: 'tool',
          content: [{ type: 'tool-result', toolCallId: 'call_1', content: [{ type: 'text', text: 'plum' }] }],
        },
      ],
    });
    expect(body.thinking).toBeUndefined();
    expect(body.max_tokens).toBe(4096);
    expect(fields).toEqual(['reasoning']);
  });

  it('keeps thinking when the tool call carries its signed thinking', () => {
    const { body, fields } = encode({
      reasoning: { budgetTokens: 2000 },
      messages: [
        user('Read a.txt'),
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'need it', signature: 'EqQB' },
            { type: 'tool-call', id: 'toolu_1', name: 'Read', arguments: '{}' },
          ],
        },
        {
          role: 'tool',
          content: [{ type: 'tool-result', toolCallId: 'toolu_1', content: [{ type: 'text', text: 'plum' }] }],
        },
      ],
    });
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 2000 });
    expect(fields).toEqual([]);
  });
});

describe('encodeCountTokensRequest', () => {
  it('keeps only the fields count_tokens accepts', () => {
    const body = encodeCountTokensRequest(
      {
        messages: [{ role: 'system', content: [{ type: 'text', text: 'S' }] }, user('Hi')],
        tools: [{ name: 'f', parameters: { type: 'object' } }],
        toolChoice: { type: 'auto' },
        maxOutputTokens: 100,
        temperature: 0.5,
        stopSequences: ['x'],
        reasoning: { budgetTokens: 1024 },
      },
      'claude-haiku-4-5',
    );
    expect(body).toEqual({
      model: 'claude-haiku-4-5',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
      system: [{ type: 'text', text: 'S' }],
      tools: [{ name: 'f', input_schema: { type: 'object' } }],
      tool_choice: { type: 'auto' },
      thinking: { type: 'enabled', budget_tokens: 1024 },
    });
  });
});
