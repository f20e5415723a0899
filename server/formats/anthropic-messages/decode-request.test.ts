import { describe, expect, it } from 'vitest';
import type { ChatCallOptions } from '../../core/chat.js';
import type { CallWarning } from '../../core/call-context.js';
import { decodeMessagesRequest } from './decode-request.js';
import type { AnthropicMessagesRequest } from './wire-types.js';

function decode(body: Partial<AnthropicMessagesRequest>) {
  const warnings: CallWarning[] = [];
  const decoded = decodeMessagesRequest(
    { model: 'claude-test', max_tokens: 1024, messages: [], ...body } as AnthropicMessagesRequest,
    (warning) => warnings.push(warning),
  );
  return { ...decoded, warnings, fields: warnings.map((warning) => warning.field) };
}

const WEATHER_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: {
    location: { type: 'string', pattern: '^[A-Z]' },
    days: { type: 'integer', exclusiveMinimum: 0, maximum: 9007199254740991 },
  },
  required: ['location'],
  additionalProperties: false,
  propertyNames: { pattern: '^[a-z]+$' },
};

describe('decodeMessagesRequest: messages', () => {
  const cases: Array<[string, { given: Partial<AnthropicMessagesRequest>; want: ChatCallOptions['messages'] }]> = [
    [
      'a string system prompt becomes a leading system message',
      {
        given: { system: 'Be brief.', messages: [{ role: 'user', content: 'Hi' }] },
        want: [
          { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
          { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
        ],
      },
    ],
    [
      'system text blocks become one system message with a part per block',
      {
        given: {
          system: [
            { type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.197.135; cc_entrypoint=sdk-cli;' },
            { type: 'text', text: 'You are Claude Code.', cache_control: { type: 'ephemeral' } },
          ],
          messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
        },
        want: [
          {
            role: 'system',
            content: [
              { type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.197.135; cc_entrypoint=sdk-cli;' },
              { type: 'text', text: 'You are Claude Code.' },
            ],
          },
          { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
        ],
      },
    ],
    [
      'role system inside messages stays a system message in place',
      {
        given: {
          system: 'Top.',
          messages: [
            { role: 'user', content: 'Read the file.' },
            { role: 'system', content: 'Environment: linux, cwd /tmp/work' },
            { role: 'assistant', content: 'Sure.' },
            { role: 'system', content: [{ type: 'text', text: 'Available agent types for the Agent tool: general' }] },
          ],
        },
        want: [
          { role: 'system', content: [{ type: 'text', text: 'Top.' }] },
          { role: 'user', content: [{ type: 'text', text: 'Read the file.' }] },
          { role: 'system', content: [{ type: 'text', text: 'Environment: linux, cwd /tmp/work' }] },
          { role: 'assistant', content: [{ type: 'text', text: 'Sure.' }] },
          { role: 'system', content: [{ type: 'text', text: 'Available agent types for the Agent tool: general' }] },
        ],
      },
    ],
    [
      'images: base64 gives data and media type, url gives url',
      {
        given: {
          messages: [
            {
              role: 'user',
              content: [
                { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
                { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
                { type: 'text', text: 'Compare them.' },
              ],
            },
          ],
        },
        want: [
          {
            role: 'user',
            content: [
              { type: 'image', data: 'iVBORw0KGgo=', mediaType: 'image/png' },
              { type: 'image', url: 'https://example.com/cat.jpg' },
              { type: 'text', text: 'Compare them.' },
            ],
          },
        ],
      },
    ],
    [
      'tool_result blocks and text in one user message split into a tool and a user message, in order',
      {
        given: {
          messages: [
            {
              role: 'user',
              content: [
                { type: 'tool_result', tool_use_id: 'toolu_1', content: '1\tThe secret word is plum\n2\t' },
                {
                  type: 'tool_result',
                  tool_use_id: 'toolu_2',
                  content: [{ type: 'text', text: 'denied' }],
                  is_error: true,
                },
                {
                  type: 'text',
                  text: '<system-reminder>Be careful.</system-reminder>',
                  cache_control: { type: 'ephemeral' },
                },
                { type: 'text', text: 'Go on.' },
              ],
            },
          ],
        },
        want: [
          {
            role: 'tool',
            content: [
              {
                type: 'tool-result',
                toolCallId: 'toolu_1',
                content: [{ type: 'text', text: '1\tThe secret word is plum\n2\t' }],
              },
              {
                type: 'tool-result',
                toolCallId: 'toolu_2',
                content: [{ type: 'text', text: 'denied' }],
                isError: true,
              },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'text', text: '<system-reminder>Be careful.</system-reminder>' },
              { type: 'text', text: 'Go on.' },
            ],
          },
        ],
      },
    ],
    [
      'text before and after a tool_result keeps its place',
      {
        given: {
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'before' },
                { type: 'tool_result', tool_use_id: 'toolu_1' },
                { type: 'text', text: 'after' },
              ],
            },
          ],
        },
        want: [
          { role: 'user', content: [{ type: 'text', text: 'before' }] },
          { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'toolu_1', content: [] }] },
          { role: 'user', content: [{ type: 'text', text: 'after' }] },
        ],
      },
    ],
    [
      'tool_result content blocks keep text and images',
      {
        given: {
          messages: [
            {
              role: 'user',
              content: [
                {
                  type: 'tool_result',
                  tool_use_id: 'toolu_9',
                  content: [
                    { type: 'text', text: 'screenshot:' },
                    { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/4AAQ' } },
                  ],
                },
              ],
            },
          ],
        },
        want: [
          {
            role: 'tool',
            content: [
              {
                type: 'tool-result',
                toolCallId: 'toolu_9',
                content: [
                  { type: 'text', text: 'screenshot:' },
                  { type: 'image', data: '/9j/4AAQ', mediaType: 'image/jpeg' },
                ],
              },
            ],
          },
        ],
      },
    ],
    [
      'assistant blocks: thinking with signature, redacted thinking, text, tool_use with input as JSON text',
      {
        given: {
          messages: [
            {
              role: 'assistant',
              content: [
                { type: 'thinking', thinking: 'Need the file.', signature: 'EqQBCgIYAhIM' },
                { type: 'redacted_thinking', data: 'EmwKAhgBEgy3' },
                { type: 'text', text: 'Reading it.' },
                { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: '/tmp/a.txt', limit: 20 } },
              ],
            },
          ],
        },
        want: [
          {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: 'Need the file.', signature: 'EqQBCgIYAhIM' },
              { type: 'reasoning', text: '', redactedData: 'EmwKAhgBEgy3' },
              { type: 'text', text: 'Reading it.' },
              { type: 'tool-call', id: 'toolu_1', name: 'Read', arguments: '{"file_path":"/tmp/a.txt","limit":20}' },
            ],
          },
        ],
      },
    ],
  ];

  it.each(cases)('%s', (_name, { given, want }) => {
    expect(decode(given).options.messages).toEqual(want);
  });
});

describe('decodeMessagesRequest: parameters', () => {
  it('maps sampling, limits, stop sequences and the user id', () => {
    const { options, model, stream, warnings } = decode({
      model: 'claude-sonnet-4-5',
      stream: true,
      max_tokens: 32000,
      temperature: 0.3,
      top_p: 0.9,
      top_k: 40,
      stop_sequences: ['\n\nHuman:', 'END'],
      metadata: { user_id: '{"device_id":"d1","account_uuid":"","session_id":"s1"}' },
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(model).toBe('claude-sonnet-4-5');
    expect(stream).toBe(true);
    expect(options).toEqual({
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
      maxOutputTokens: 32000,
      temperature: 0.3,
      topP: 0.9,
      topK: 40,
      stopSequences: ['\n\nHuman:', 'END'],
    });
    expect(warnings.map((warning) => warning.field)).toEqual(['metadata.user_id']);
  });

  it('stream defaults to false', () => {
    expect(decode({ messages: [{ role: 'user', content: 'Hi' }] }).stream).toBe(false);
  });

  const toolChoices: Array<
    [string, { given: AnthropicMessagesRequest['tool_choice']; want: Partial<ChatCallOptions> }]
  > = [
    ['auto', { given: { type: 'auto' }, want: { toolChoice: { type: 'auto' } } }],
    ['any → required', { given: { type: 'any' }, want: { toolChoice: { type: 'required' } } }],
    ['tool → named', { given: { type: 'tool', name: 'Read' }, want: { toolChoice: { type: 'tool', name: 'Read' } } }],
    ['none', { given: { type: 'none' }, want: { toolChoice: { type: 'none' } } }],
    [
      'disable_parallel_tool_use → parallelToolCalls false',
      {
        given: { type: 'auto', disable_parallel_tool_use: true },
        want: { toolChoice: { type: 'auto' }, parallelToolCalls: false },
      },
    ],
  ];
  it.each(toolChoices)('tool_choice %s', (_name, { given, want }) => {
    const { options } = decode({ tool_choice: given, messages: [{ role: 'user', content: 'Hi' }] });
    expect({ toolChoice: options.toolChoice, parallelToolCalls: options.parallelToolCalls }).toEqual({
      parallelToolCalls: undefined,
      ...want,
    });
  });

  const thinking: Array<[string, { given: Partial<AnthropicMessagesRequest>; want: ChatCallOptions['reasoning'] }]> = [
    [
      'enabled → budget',
      { given: { thinking: { type: 'enabled', budget_tokens: 10000 } }, want: { budgetTokens: 10000 } },
    ],
    ['adaptive → reasoning without effort', { given: { thinking: { type: 'adaptive' } }, want: {} }],
    [
      'adaptive + output_config.effort → effort',
      {
        given: { thinking: { type: 'adaptive', display: 'omitted' }, output_config: { effort: 'high' } },
        want: { effort: 'high' },
      },
    ],
    [
      'enabled + effort → both',
      {
        given: { thinking: { type: 'enabled', budget_tokens: 2048 }, output_config: { effort: 'low' } },
        want: { budgetTokens: 2048, effort: 'low' },
      },
    ],
    ['disabled → none', { given: { thinking: { type: 'disabled' } }, want: undefined }],
    ['absent → none', { given: {}, want: undefined }],
  ];
  it.each(thinking)('thinking %s', (_name, { given, want }) => {
    expect(decode({ ...given, messages: [{ role: 'user', content: 'Hi' }] }).options.reasoning).toEqual(want);
  });

  it('output_config.format json_schema becomes a json-schema response format', () => {
    const schema = {
      type: 'object',
      properties: { answer: { type: 'string' } },
      required: ['answer'],
      additionalProperties: false,
    };
    const { options, warnings } = decode({
      output_config: { format: { type: 'json_schema', schema } },
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(options.responseFormat).toEqual({ type: 'json-schema', name: 'output', schema });
    expect(warnings).toEqual([]);
  });
});

describe('decodeMessagesRequest: tools', () => {
  it('keeps custom tools with their schema untouched and drops server tools with a warning', () => {
    const { options, warnings } = decode({
      messages: [{ role: 'user', content: 'Hi' }],
      tools: [
        { name: 'get_weather', description: 'Weather by city', input_schema: WEATHER_SCHEMA },
        {
          type: 'custom',
          name: 'Bash',
          input_schema: { type: 'object', properties: { command: { type: 'string' } } },
          strict: true,
        },
        { type: 'web_search_20250305', name: 'web_search', max_uses: 5 } as never,
      ],
    });
    expect(options.tools).toEqual([
      { name: 'get_weather', description: 'Weather by city', parameters: WEATHER_SCHEMA },
      { name: 'Bash', parameters: { type: 'object', properties: { command: { type: 'string' } } }, strict: true },
    ]);
    expect(options.tools?.[0].parameters).toBe(WEATHER_SCHEMA);
    expect(warnings).toEqual([
      { field: 'tools.web_search', reason: "server tool 'web_search_20250305' is not supported; the tool was dropped" },
    ]);
  });

  it('drops tools entirely when only server tools were given', () => {
    const { options } = decode({
      messages: [{ role: 'user', content: 'Hi' }],
      tools: [{ type: 'bash_20250124', name: 'bash' } as never],
    });
    expect(options.tools).toBeUndefined();
  });
});

describe('decodeMessagesRequest: accepted but not honoured', () => {
  it('warns once per field, and once for cache_control wherever it appears', () => {
    const { fields, options } = decode({
      system: [{ type: 'text', text: 'S', cache_control: { type: 'ephemeral' } }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'a', cache_control: { type: 'ephemeral', ttl: '1h' } },
            { type: 'tool_result', tool_use_id: 't', content: 'r', cache_control: { type: 'ephemeral' } },
            { type: 'text', text: 'cited', citations: [{ type: 'char_location', cited_text: 'x' }] },
          ],
        },
      ],
      tools: [
        {
          name: 'A',
          input_schema: { type: 'object' },
          cache_control: { type: 'ephemeral' },
          eager_input_streaming: true,
        },
        { name: 'B', input_schema: { type: 'object' }, eager_input_streaming: true },
        { name: 'DeferredToolPlaceholder', input_schema: { type: 'object' }, defer_loading: true },
      ],
      cache_control: { type: 'ephemeral' },
      context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
      service_tier: 'auto',
      container: 'container_1',
      mcp_servers: [{ type: 'url', url: 'https://mcp.example.com', name: 'x' }],
      output_config: { effort: 'high', task_budget: 5 },
    });
    expect(fields.sort()).toEqual(
      [
        'cache_control',
        'citations',
        'container',
        'context_management',
        'defer_loading',
        'eager_input_streaming',
        'mcp_servers',
        'output_config.task_budget',
        'service_tier',
      ].sort(),
    );
    expect(options.tools?.map((tool) => tool.name)).toEqual(['A', 'B', 'DeferredToolPlaceholder']);
    expect(options.reasoning).toEqual({ effort: 'high' });
  });

  it('turns text documents into text and drops other documents, with one warning', () => {
    const { options, warnings } = decode({
      messages: [
        {
          role: 'user',
          content: [
            {
              type: 'document',
              source: { type: 'text', media_type: 'text/plain', data: 'The grass is green.' },
              title: 'Facts',
            },
            {
              type: 'document',
              source: {
                type: 'content',
                content: [
                  { type: 'text', text: 'Part one.' },
                  { type: 'text', text: 'Part two.' },
                ],
              },
            },
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0x' } },
            { type: 'text', text: 'Summarise.' },
          ],
        },
      ],
    });
    expect(options.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'The grass is green.' },
          { type: 'text', text: 'Part one.' },
          { type: 'text', text: 'Part two.' },
          { type: 'text', text: 'Summarise.' },
        ],
      },
    ]);
    expect(warnings.map((warning) => warning.field)).toEqual(['document']);
  });

  it('drops unsupported blocks with a warning and no empty message', () => {
    const { options, fields } = decode({
      messages: [
        { role: 'user', content: [{ type: 'search_result', source: 'https://x', title: 't', content: [] }] },
        { role: 'assistant', content: [{ type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} }] },
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'file', file_id: 'file_1' } },
            { type: 'text', text: 'ok' },
          ],
        },
      ],
    });
    expect(options.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'ok' }] }]);
    expect(fields).toEqual(['messages.content.search_result', 'messages.content.server_tool_use', 'image.source']);
  });
});

describe('decodeMessagesRequest: a Claude Code request', () => {
  it('decodes the body Claude Code 2.1 sends', () => {
    const { options, stream, fields } = decode({
      model: 'claude-sonnet-4-5',
      max_tokens: 32000,
      stream: true,
      thinking: { type: 'adaptive' },
      context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
      output_config: { effort: 'high' },
      metadata: { user_id: '{"device_id":"abc","account_uuid":"","session_id":"s-1"}' },
      system: [
        { type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.197.135; cc_entrypoint=sdk-cli;' },
        { type: 'text', text: 'You are Claude Code.', cache_control: { type: 'ephemeral' } },
      ],
      tools: [
        {
          name: 'Read',
          description: 'Reads a file',
          input_schema: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] },
        },
      ],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: '<system-reminder>ctx</system-reminder>' },
            { type: 'text', text: 'What is in a.txt?', cache_control: { type: 'ephemeral' } },
          ],
        },
        { role: 'system', content: 'Environment: cwd /tmp/w' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: '', signature: 'sig-omitted' },
            { type: 'tool_use', id: 'toolu_01', name: 'Read', input: { file_path: '/tmp/w/a.txt' } },
          ],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_01',
              content: '1\tplum\n2\t',
              cache_control: { type: 'ephemeral' },
            },
          ],
        },
      ],
    });
    expect(stream).toBe(true);
    expect(options).toEqual({
      messages: [
        {
          role: 'system',
          content: [
            { type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.197.135; cc_entrypoint=sdk-cli;' },
            { type: 'text', text: 'You are Claude Code.' },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'text', text: '<system-reminder>ctx</system-reminder>' },
            { type: 'text', text: 'What is in a.txt?' },
          ],
        },
        { role: 'system', content: [{ type: 'text', text: 'Environment: cwd /tmp/w' }] },
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: '', signature: 'sig-omitted' },
            { type: 'tool-call', id: 'toolu_01', name: 'Read', arguments: '{"file_path":"/tmp/w/a.txt"}' },
          ],
        },
        {
          role: 'tool',
          content: [{ type: 'tool-result', toolCallId: 'toolu_01', content: [{ type: 'text', text: '1\tplum\n2\t' }] }],
        },
      ],
      tools: [
        {
          name: 'Read',
          description: 'Reads a file',
          parameters: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] },
        },
      ],
      maxOutputTokens: 32000,
      reasoning: { effort: 'high' },
    });
    expect(fields).toEqual(['cache_control', 'metadata.user_id', 'context_management']);
  });
});
