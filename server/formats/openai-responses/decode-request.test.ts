import { describe, expect, it } from 'vitest';
import { ApiError } from '../../core/api-error.js';
import type { ChatCallOptions, ChatMessage } from '../../core/chat.js';
import type { CallWarning } from '../../core/call-context.js';
import { decodeResponsesRequest, type DecodedResponsesRequest } from './decode-request.js';
import type { OutputItem, ResponsesRequestBody } from './wire-types.js';

const storedItems: Record<string, OutputItem> = {
  msg_stored1: {
    id: 'msg_stored1',
    type: 'message',
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text: 'Paris is the capital.', annotations: [], logprobs: [] }],
  },
  fc_stored2: {
    id: 'fc_stored2',
    type: 'function_call',
    status: 'completed',
    call_id: 'call_9',
    name: 'lookup',
    arguments: '{"q":"x"}',
  },
};

function decode(body: Record<string, unknown>, history: ChatMessage[] = []) {
  const warnings: CallWarning[] = [];
  const decoded = decodeResponsesRequest(
    { model: 'm', ...body } as ResponsesRequestBody,
    { history, resolveItem: (id) => storedItems[id] },
    (warning) => warnings.push(warning),
  );
  return { decoded, warnings };
}

const user = (text: string): ChatMessage => ({ role: 'user', content: [{ type: 'text', text }] });
const system = (text: string): ChatMessage => ({ role: 'system', content: [{ type: 'text', text }] });

interface DecodeCase {
  given: Record<string, unknown>;
  history?: ChatMessage[];
  want: ChatCallOptions;
  /** Fields of the warnings, in order; none when absent. */
  warned?: string[];
  more?: (decoded: DecodedResponsesRequest) => void;
}

const cases: Array<[string, DecodeCase]> = [
  ['a string input becomes one user message', { given: { input: 'Hello' }, want: { messages: [user('Hello')] } }],
  [
    'input messages without type (Vercel AI SDK) are messages',
    {
      given: {
        input: [
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'Hi' },
              { type: 'input_text', text: 'there' },
            ],
          },
        ],
      },
      want: {
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Hi' },
              { type: 'text', text: 'there' },
            ],
          },
        ],
      },
    },
  ],
  [
    'instructions lead, then the previous conversation, then the input',
    {
      given: { instructions: 'Be brief.', input: 'And Spain?', previous_response_id: 'resp_1' },
      history: [user('Capital of France?'), { role: 'assistant', content: [{ type: 'text', text: 'Paris.' }] }],
      want: {
        messages: [
          system('Be brief.'),
          user('Capital of France?'),
          { role: 'assistant', content: [{ type: 'text', text: 'Paris.' }] },
          user('And Spain?'),
        ],
      },
      more: (decoded) => {
        expect(decoded.inputMessages).toEqual([user('And Spain?')]);
        expect(decoded.echo.instructions).toBe('Be brief.');
        expect(decoded.echo.previousResponseId).toBe('resp_1');
      },
    },
  ],
  [
    'developer and system messages become system messages where they stand',
    {
      given: {
        input: [
          { role: 'developer', content: 'Rules.' },
          { type: 'message', role: 'user', content: 'Q' },
          { role: 'system', content: [{ type: 'input_text', text: 'Mid.' }] },
        ],
      },
      want: { messages: [system('Rules.'), user('Q'), system('Mid.')] },
    },
  ],
  [
    'a function call and its output round-trip (Vercel second step, no item ids)',
    {
      given: {
        input: [
          { role: 'user', content: [{ type: 'input_text', text: 'Weather in Oslo?' }] },
          { type: 'function_call', call_id: 'call_1', name: 'weather', arguments: '{"city":"Oslo"}' },
          { type: 'function_call_output', call_id: 'call_1', output: '{"temp":-3}' },
        ],
      },
      want: {
        messages: [
          user('Weather in Oslo?'),
          {
            role: 'assistant',
            content: [{ type: 'tool-call', id: 'call_1', name: 'weather', arguments: '{"city":"Oslo"}' }],
          },
          {
            role: 'tool',
            content: [{ type: 'tool-result', toolCallId: 'call_1', content: [{ type: 'text', text: '{"temp":-3}' }] }],
          },
        ],
      },
    },
  ],
  [
    'an assistant message, reasoning and parallel function calls merge into one turn; their outputs into one tool message',
    {
      given: {
        input: [
          { role: 'user', content: 'Compare' },
          {
            type: 'reasoning',
            id: 'rs_1',
            summary: [
              { type: 'summary_text', text: 'Two lookups.' },
              { type: 'summary_text', text: 'Then compare.' },
            ],
          },
          { role: 'assistant', content: [{ type: 'output_text', text: 'Looking up.' }] },
          {
            type: 'function_call',
            id: 'fc_1',
            call_id: 'call_a',
            name: 'get',
            arguments: '{"k":"a"}',
            status: 'completed',
          },
          {
            type: 'function_call',
            id: 'fc_2',
            call_id: 'call_b',
            name: 'get',
            arguments: '{"k":"b"}',
            status: 'completed',
          },
          { type: 'function_call_output', call_id: 'call_a', output: [{ type: 'input_text', text: 'A=1' }] },
          { type: 'function_call_output', call_id: 'call_b', output: 'B=2' },
        ],
      },
      want: {
        messages: [
          user('Compare'),
          {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: 'Two lookups.\n\nThen compare.', itemId: 'rs_1' },
              { type: 'text', text: 'Looking up.' },
              { type: 'tool-call', id: 'call_a', name: 'get', arguments: '{"k":"a"}', itemId: 'fc_1' },
              { type: 'tool-call', id: 'call_b', name: 'get', arguments: '{"k":"b"}', itemId: 'fc_2' },
            ],
          },
          {
            role: 'tool',
            content: [
              { type: 'tool-result', toolCallId: 'call_a', content: [{ type: 'text', text: 'A=1' }] },
              { type: 'tool-result', toolCallId: 'call_b', content: [{ type: 'text', text: 'B=2' }] },
            ],
          },
        ],
      },
    },
  ],
  [
    'item_reference (with and without type) resolves to the stored output items',
    {
      given: {
        input: [
          { role: 'user', content: 'Capital?' },
          { type: 'item_reference', id: 'msg_stored1' },
          { id: 'fc_stored2' },
          { type: 'function_call_output', call_id: 'call_9', output: 'ok' },
        ],
      },
      want: {
        messages: [
          user('Capital?'),
          {
            role: 'assistant',
            content: [
              { type: 'text', text: 'Paris is the capital.' },
              { type: 'tool-call', id: 'call_9', name: 'lookup', arguments: '{"q":"x"}', itemId: 'fc_stored2' },
            ],
          },
          {
            role: 'tool',
            content: [{ type: 'tool-result', toolCallId: 'call_9', content: [{ type: 'text', text: 'ok' }] }],
          },
        ],
      },
    },
  ],
  [
    'a Codex body: client-made ids, namespace and web_search tools, encrypted reasoning, store false',
    {
      given: {
        stream: true,
        store: false,
        input: [
          {
            type: 'message',
            id: 'msg_0b6f0c9e-2f3c-4c1b-9a55-4d8e8f0a1b2c',
            role: 'developer',
            content: [{ type: 'input_text', text: 'You are Codex.' }],
          },
          {
            type: 'message',
            id: 'msg_7f1d2a44-1e5b-4b0e-8d7a-2c3b4d5e6f70',
            role: 'user',
            content: [{ type: 'input_text', text: 'Run echo word' }],
          },
          { type: 'reasoning', id: 'rs_prev', summary: [], encrypted_content: 'gAAAAB-opaque' },
          {
            type: 'function_call',
            id: 'fc_prev',
            call_id: 'call_x',
            name: 'exec_command',
            arguments: '{"cmd":"echo word"}',
            status: 'completed',
          },
          {
            type: 'function_call_output',
            id: 'fco_3a2b1c0d-9e8f-4a7b-8c6d-5e4f3a2b1c0d',
            call_id: 'call_x',
            output:
              'Chunk ID: 1\nWall time: 0.01s\nProcess exited with code 0\nOriginal token count: 3\nOutput:\nword\n',
          },
        ],
        tools: [
          {
            type: 'function',
            name: 'exec_command',
            description: 'Run a command',
            strict: false,
            parameters: {
              type: 'object',
              properties: { cmd: { type: 'string' } },
              required: ['cmd'],
              additionalProperties: false,
            },
          },
          {
            type: 'namespace',
            name: 'multi_agent_v1',
            description: 'Agents',
            tools: [
              {
                type: 'function',
                name: 'spawn_agent',
                description: 'Spawn',
                strict: false,
                parameters: { type: 'object', properties: {} },
              },
            ],
          },
          { type: 'web_search', external_web_access: false },
        ],
        tool_choice: 'auto',
        parallel_tool_calls: true,
        reasoning: { summary: 'auto' },
        include: ['reasoning.encrypted_content'],
        prompt_cache_key: '5c1d2e3f-0000-4000-8000-000000000001',
        client_metadata: { turn_id: 't1', session_id: 's1' },
      },
      want: {
        messages: [
          system('You are Codex.'),
          user('Run echo word'),
          {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: '', encryptedContent: 'gAAAAB-opaque', itemId: 'rs_prev' },
              {
                type: 'tool-call',
                id: 'call_x',
                name: 'exec_command',
                arguments: '{"cmd":"echo word"}',
                itemId: 'fc_prev',
              },
            ],
          },
          {
            role: 'tool',
            content: [
              {
                type: 'tool-result',
                toolCallId: 'call_x',
                content: [
                  {
                    type: 'text',
                    text: 'Chunk ID: 1\nWall time: 0.01s\nProcess exited with code 0\nOriginal token count: 3\nOutput:\nword\n',
                  },
                ],
              },
            ],
          },
        ],
        tools: [
          {
            name: 'exec_command',
            description: 'Run a command',
            strict: false,
            parameters: {
              type: 'object',
              properties: { cmd: { type: 'string' } },
              required: ['cmd'],
              additionalProperties: false,
            },
          },
          { name: 'spawn_agent', description: 'Spawn', strict: false, parameters: { type: 'object', properties: {} } },
        ],
        toolChoice: { type: 'auto' },
        parallelToolCalls: true,
      },
      warned: ['prompt_cache_key', 'client_metadata', 'tools.namespace', 'tools.web_search'],
      more: (decoded) => {
        expect(decoded.stream).toBe(true);
        expect(decoded.store).toBe(false);
        expect(decoded.includeEncryptedReasoning).toBe(true);
        expect(decoded.echo.tools.map((tool) => tool.name)).toEqual(['exec_command', 'spawn_agent']);
        expect(decoded.echo.toolNamespaces).toEqual(new Map([['spawn_agent', 'multi_agent_v1']]));
        expect(decoded.echo.reasoning).toEqual({ effort: null, summary: 'auto' });
      },
    },
  ],
  [
    'namespace tools are flattened and each function remembers its namespace; plain functions have none',
    {
      given: {
        input: 'x',
        tools: [
          { type: 'function', name: 'exec_command', parameters: { type: 'object', properties: {} } },
          {
            type: 'namespace',
            name: 'multi_agent_v1',
            description: 'Agents',
            tools: [
              {
                type: 'function',
                name: 'spawn_agent',
                description: 'Spawn',
                parameters: { type: 'object', properties: { task: { type: 'string' } } },
              },
              {
                type: 'function',
                name: 'wait_agent',
                description: 'Wait',
                strict: false,
                parameters: { type: 'object', properties: { targets: { type: 'array' } } },
              },
            ],
          },
        ],
      },
      want: {
        messages: [user('x')],
        tools: [
          { name: 'exec_command', parameters: { type: 'object', properties: {} } },
          {
            name: 'spawn_agent',
            description: 'Spawn',
            parameters: { type: 'object', properties: { task: { type: 'string' } } },
          },
          {
            name: 'wait_agent',
            description: 'Wait',
            strict: false,
            parameters: { type: 'object', properties: { targets: { type: 'array' } } },
          },
        ],
      },
      warned: ['tools.namespace'],
      more: (decoded) => {
        expect(decoded.echo.toolNamespaces).toEqual(
          new Map([
            ['spawn_agent', 'multi_agent_v1'],
            ['wait_agent', 'multi_agent_v1'],
          ]),
        );
        expect(decoded.echo.toolNamespaces.has('exec_command')).toBe(false);
        expect(decoded.echo.tools.map((tool) => tool.name)).toEqual(['exec_command', 'spawn_agent', 'wait_agent']);
      },
    },
  ],
  [
    'a name shared by a plain and a namespaced function: the first listed wins, with its namespace or none',
    {
      given: {
        input: 'x',
        tools: [
          { type: 'function', name: 'wait_agent', description: 'plain' },
          {
            type: 'namespace',
            name: 'multi_agent_v1',
            tools: [
              { type: 'function', name: 'wait_agent', description: 'namespaced' },
              { type: 'function', name: 'close_agent' },
            ],
          },
          {
            type: 'namespace',
            name: 'other_ns',
            tools: [{ type: 'function', name: 'close_agent', description: 'second' }],
          },
          { type: 'function', name: 'close_agent', description: 'plain, third' },
        ],
      },
      want: {
        messages: [user('x')],
        tools: [
          { name: 'wait_agent', description: 'plain', parameters: { type: 'object', properties: {} } },
          { name: 'close_agent', parameters: { type: 'object', properties: {} } },
        ],
      },
      warned: ['tools.namespace', 'tools'],
      more: (decoded) => {
        expect(decoded.echo.toolNamespaces).toEqual(new Map([['close_agent', 'multi_agent_v1']]));
      },
    },
  ],
  [
    'a replayed function_call with the namespace Codex sends back decodes like any call, without a warning',
    {
      given: {
        input: [
          { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'wait for them' }] },
          {
            type: 'function_call',
            id: 'fc_1',
            call_id: 'call_w',
            name: 'wait_agent',
            namespace: 'multi_agent_v1',
            arguments: '{"targets":["nobody"],"timeout_ms":10}',
            status: 'completed',
          },
          { type: 'function_call_output', call_id: 'call_w', output: 'timed out' },
        ],
      },
      want: {
        messages: [
          user('wait for them'),
          {
            role: 'assistant',
            content: [
              {
                type: 'tool-call',
                id: 'call_w',
                name: 'wait_agent',
                arguments: '{"targets":["nobody"],"timeout_ms":10}',
                itemId: 'fc_1',
              },
            ],
          },
          {
            role: 'tool',
            content: [{ type: 'tool-result', toolCallId: 'call_w', content: [{ type: 'text', text: 'timed out' }] }],
          },
        ],
      },
    },
  ],
  [
    'a LangChain body: string content with type, text {}, strict null, stream false',
    {
      given: {
        stream: false,
        input: [{ type: 'message', role: 'user', content: 'What is 2+2?' }],
        text: {},
        tools: [
          {
            type: 'function',
            name: 'add',
            description: 'Adds',
            strict: null,
            parameters: {
              $schema: 'https://json-schema.org/draft/2020-12/schema',
              type: 'object',
              properties: { a: { type: 'number', exclusiveMinimum: 0 } },
            },
          },
        ],
      },
      want: {
        messages: [user('What is 2+2?')],
        tools: [
          {
            name: 'add',
            description: 'Adds',
            parameters: {
              $schema: 'https://json-schema.org/draft/2020-12/schema',
              type: 'object',
              properties: { a: { type: 'number', exclusiveMinimum: 0 } },
            },
          },
        ],
      },
      more: (decoded) => {
        expect(decoded.stream).toBe(false);
        expect(decoded.store).toBe(true);
        expect(decoded.echo.text).toEqual({ format: { type: 'text' } });
        expect(decoded.echo.tools[0].strict).toBeNull();
      },
    },
  ],
  [
    'sampling, limits, reasoning effort, json_schema format and user map to call options',
    {
      given: {
        input: 'x',
        max_output_tokens: 300,
        temperature: 0.2,
        top_p: 0.9,
        reasoning: { effort: 'high' },
        user: 'end-user-7',
        text: {
          format: {
            type: 'json_schema',
            name: 'answer',
            schema: { type: 'object' },
            strict: true,
            description: 'The answer',
          },
        },
        metadata: { trace: 'abc' },
      },
      want: {
        messages: [user('x')],
        maxOutputTokens: 300,
        temperature: 0.2,
        topP: 0.9,
        reasoning: { effort: 'high' },
        user: 'end-user-7',
        responseFormat: {
          type: 'json-schema',
          name: 'answer',
          schema: { type: 'object' },
          strict: true,
          description: 'The answer',
        },
      },
      more: (decoded) => {
        expect(decoded.echo).toMatchObject({
          metadata: { trace: 'abc' },
          maxOutputTokens: 300,
          temperature: 0.2,
          topP: 0.9,
          reasoning: { effort: 'high', summary: null },
        });
      },
    },
  ],
  [
    'json_object format maps to json',
    {
      given: { input: 'x', text: { format: { type: 'json_object' } } },
      want: { messages: [user('x')], responseFormat: { type: 'json' } },
    },
  ],
  [
    'images by URL are kept; input_file parts are dropped with a warning',
    {
      given: {
        input: [
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'Describe' },
              { type: 'input_image', image_url: 'https://example.com/cat.png', detail: 'low' },
              { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' },
              { type: 'input_file', file_id: 'file_1' },
            ],
          },
        ],
      },
      want: {
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Describe' },
              { type: 'image', url: 'https://example.com/cat.png', detail: 'low' },
              { type: 'image', url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' },
            ],
          },
        ],
      },
      warned: ['input.input_file'],
    },
  ],
  [
    'a function name tool_choice becomes a tool choice; allowed_tools is warned and keeps its mode',
    {
      given: {
        input: 'x',
        tools: [{ type: 'function', name: 'f', parameters: null }],
        tool_choice: { type: 'function', name: 'f' },
      },
      want: {
        messages: [user('x')],
        tools: [{ name: 'f', parameters: { type: 'object', properties: {} } }],
        toolChoice: { type: 'tool', name: 'f' },
      },
      more: (decoded) => expect(decoded.echo.toolChoice).toEqual({ type: 'function', name: 'f' }),
    },
  ],
  [
    'allowed_tools keeps its mode with a warning',
    {
      given: {
        input: 'x',
        tools: [{ type: 'function', name: 'f' }],
        tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'f' }] },
      },
      want: {
        messages: [user('x')],
        tools: [{ name: 'f', parameters: { type: 'object', properties: {} } }],
        toolChoice: { type: 'required' },
      },
      warned: ['tool_choice.allowed_tools'],
    },
  ],
  [
    'tool_choice is dropped when every tool was dropped',
    {
      given: { input: 'x', tools: [{ type: 'web_search_preview' }], tool_choice: 'required' },
      want: { messages: [user('x')] },
      warned: ['tools.web_search_preview', 'tool_choice'],
    },
  ],
  [
    'ignored fields warn once each; include entries other than encrypted reasoning are named',
    {
      given: {
        input: 'x',
        include: ['reasoning.encrypted_content', 'message.output_text.logprobs'],
        service_tier: 'flex',
        safety_identifier: 'u1',
        truncation: 'auto',
        max_tool_calls: 3,
        top_logprobs: 2,
        stream_options: { include_obfuscation: false },
        context_management: [{ type: 'compaction' }],
        background: false,
        conversation: null,
        text: { verbosity: 'low' },
      },
      want: { messages: [user('x')] },
      warned: [
        'safety_identifier',
        'service_tier',
        'context_management',
        'max_tool_calls',
        'top_logprobs',
        'stream_options',
        'truncation',
        'include',
        'text.verbosity',
      ],
    },
  ],
  [
    'Anthropic thinking state carried in encrypted_content comes back as signature and redacted data',
    {
      given: {
        input: [
          { role: 'user', content: 'q' },
          {
            type: 'reasoning',
            id: 'rs_a',
            summary: [{ type: 'summary_text', text: 'thought' }],
            encrypted_content: 'omnigate.anthropic-signature:c2ln',
          },
          { type: 'reasoning', id: 'rs_b', summary: [], encrypted_content: 'omnigate.anthropic-redacted:cmVk' },
          { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'a' }] },
        ],
      },
      want: {
        messages: [
          user('q'),
          {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: 'thought', signature: 'c2ln', itemId: 'rs_a' },
              { type: 'reasoning', text: '', redactedData: 'cmVk', itemId: 'rs_b' },
              { type: 'text', text: 'a' },
            ],
          },
        ],
      },
    },
  ],
];

describe('decodeResponsesRequest', () => {
  it.each(cases)('%s', (_name, { given, history, want, warned, more }) => {
    const { decoded, warnings } = decode(given, history);
    expect(decoded.options).toEqual(want);
    expect(warnings.map((warning) => warning.field)).toEqual(warned ?? []);
    more?.(decoded);
  });

  it('returns the string input as one user message item and defaults the echo', () => {
    const { decoded } = decode({ input: 'Hi' });
    expect(decoded.model).toBe('m');
    expect(decoded.inputItems).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] },
    ]);
    expect(decoded.echo).toEqual({
      instructions: null,
      metadata: {},
      previousResponseId: null,
      store: true,
      temperature: null,
      topP: null,
      maxOutputTokens: null,
      text: { format: { type: 'text' } },
      toolChoice: 'auto',
      tools: [],
      toolNamespaces: new Map(),
      parallelToolCalls: true,
      reasoning: { effort: null, summary: null },
    });
  });

  const failures: Array<[string, Record<string, unknown>, { status: number; param: string; message: RegExp }]> = [
    [
      'an unknown item_reference is a 404 on input',
      { input: [{ type: 'item_reference', id: 'msg_nope' }] },
      { status: 404, param: 'input', message: /msg_nope/ },
    ],
    [
      'an image by file_id is a 400',
      { input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file_1', detail: 'auto' }] }] },
      { status: 400, param: 'input', message: /file_id/ },
    ],
    [
      'background true is a 400',
      { input: 'x', background: true },
      { status: 400, param: 'background', message: /background/ },
    ],
    [
      'conversation is a 400',
      { input: 'x', conversation: 'conv_1' },
      { status: 400, param: 'conversation', message: /previous_response_id/ },
    ],
    ['prompt is a 400', { input: 'x', prompt: { id: 'pmpt_1' } }, { status: 400, param: 'prompt', message: /prompt/ }],
    [
      'no input and no history is a 400',
      { instructions: 'Only instructions', input: [] },
      { status: 400, param: 'input', message: /no input/ },
    ],
    [
      'a tool_choice naming an unknown function is a 400',
      { input: 'x', tools: [{ type: 'function', name: 'f' }], tool_choice: { type: 'function', name: 'g' } },
      { status: 400, param: 'tool_choice', message: /'g'/ },
    ],
    [
      'an unknown role is a 400',
      { input: [{ role: 'robot', content: 'x' }] },
      { status: 400, param: 'input', message: /robot/ },
    ],
  ];

  it.each(failures)('%s', (_name, given, want) => {
    let thrown: unknown;
    try {
      decode(given);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ApiError);
    const error = thrown as ApiError;
    expect({ status: error.status, param: error.param }).toEqual({ status: want.status, param: want.param });
    expect(error.message).toMatch(want.message);
  });

  it('an item_reference may not point at another item_reference', () => {
    const warnings: CallWarning[] = [];
    expect(() =>
      decodeResponsesRequest(
        { model: 'm', input: [{ type: 'item_reference', id: 'a' }] },
        { history: [], resolveItem: () => ({ type: 'item_reference', id: 'a' }) },
        (w) => warnings.push(w),
      ),
    ).toThrow(ApiError);
  });
});
