import { describe, expect, it } from 'vitest';
import { ApiError } from '../../core/api-error.js';
import type { ChatCallOptions } from '../../core/chat.js';
import type { CallWarning } from '../../core/call-context.js';
import { decodeChatRequest } from './decode-request.js';
import type { ChatCompletionRequest } from './wire-types.js';

function decode(body: Record<string, unknown>) {
  const warnings: CallWarning[] = [];
  const decoded = decodeChatRequest(
    { model: 'm', messages: [{ role: 'user', content: 'hi' }], ...body } as ChatCompletionRequest,
    (warning) => warnings.push(warning),
  );
  return { ...decoded, warnings };
}

const WEATHER_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  properties: {
    city: { type: 'string', format: 'uri', pattern: '^.+$' },
    days: { type: 'integer', exclusiveMinimum: 0, maximum: 9007199254740991 },
  },
  required: ['city'],
  additionalProperties: false,
};

describe('decodeChatRequest messages', () => {
  const cases: Array<[string, { given: unknown[]; want: ChatCallOptions['messages'] }]> = [
    [
      'a user string',
      {
        given: [{ role: 'user', content: 'hello' }],
        want: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }],
      },
    ],
    [
      'system and developer as system messages, in place',
      {
        given: [
          { role: 'developer', content: 'be brief' },
          { role: 'user', content: 'q' },
          {
            role: 'system',
            content: [
              { type: 'text', text: 'a' },
              { type: 'text', text: 'b' },
            ],
          },
        ],
        want: [
          { role: 'system', content: [{ type: 'text', text: 'be brief' }] },
          { role: 'user', content: [{ type: 'text', text: 'q' }] },
          {
            role: 'system',
            content: [
              { type: 'text', text: 'a' },
              { type: 'text', text: 'b' },
            ],
          },
        ],
      },
    ],
    [
      'user parts with an http image and a data URL image kept as url',
      {
        given: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'what is this?' },
              { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'low' } },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            ],
          },
        ],
        want: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'what is this?' },
              { type: 'image', url: 'https://example.com/cat.png', detail: 'low' },
              { type: 'image', url: 'data:image/png;base64,iVBORw0KGgo=' },
            ],
          },
        ],
      },
    ],
    [
      'an assistant turn with content null, tool calls and reasoning_content',
      {
        given: [
          {
            role: 'assistant',
            content: null,
            reasoning_content: 'need weather',
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
              { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
            ],
          },
        ],
        want: [
          {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: 'need weather' },
              { type: 'tool-call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
              { type: 'tool-call', id: 'call_2', name: 'get_time', arguments: '{}' },
            ],
          },
        ],
      },
    ],
    [
      'an assistant turn with text parts, a refusal part and `reasoning`',
      {
        given: [
          {
            role: 'assistant',
            reasoning: 'hm',
            content: [
              { type: 'text', text: 'a' },
              { type: 'refusal', refusal: 'no' },
            ],
          },
        ],
        want: [
          {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: 'hm' },
              { type: 'text', text: 'a' },
              { type: 'text', text: 'no' },
            ],
          },
        ],
      },
    ],
    [
      'an assistant string with an empty content string dropped',
      { given: [{ role: 'assistant', content: '' }], want: [{ role: 'assistant', content: [] }] },
    ],
    [
      'consecutive tool messages stay separate, with their call ids',
      {
        given: [
          { role: 'tool', tool_call_id: 'call_1', content: '18°C' },
          { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: '10:00' }] },
        ],
        want: [
          {
            role: 'tool',
            content: [{ type: 'tool-result', toolCallId: 'call_1', content: [{ type: 'text', text: '18°C' }] }],
          },
          {
            role: 'tool',
            content: [{ type: 'tool-result', toolCallId: 'call_2', content: [{ type: 'text', text: '10:00' }] }],
          },
        ],
      },
    ],
  ];
  it.each(cases)('decodes %s', (_name, { given, want }) => {
    expect(decode({ messages: given }).options.messages).toEqual(want);
  });

  const rejected: Array<[string, { given: unknown[]; param: string }]> = [
    [
      'input_audio parts',
      {
        given: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAA', format: 'wav' } }] }],
        param: 'messages[0].content[0]',
      },
    ],
    [
      'file parts',
      {
        given: [
          { role: 'user', content: 'x' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'a' },
              { type: 'file', file: { file_id: 'f' } },
            ],
          },
        ],
        param: 'messages[1].content[1]',
      },
    ],
    [
      'image parts in a system message',
      {
        given: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }],
        param: 'messages[0].content[0]',
      },
    ],
    [
      'the deprecated function role',
      { given: [{ role: 'function', name: 'f', content: 'x' }], param: 'messages[0].role' },
    ],
  ];
  it.each(rejected)('rejects %s with a 400 naming the element', (_name, { given, param }) => {
    try {
      decode({ messages: given });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(400);
      expect((error as ApiError).param).toBe(param);
    }
  });
});

describe('decodeChatRequest parameters', () => {
  const cases: Array<[string, { given: Record<string, unknown>; want: Partial<ChatCallOptions> }]> = [
    [
      'function tools with parameters untouched',
      {
        given: {
          tools: [
            {
              type: 'function',
              function: { name: 'get_weather', description: 'Weather', parameters: WEATHER_SCHEMA, strict: true },
            },
          ],
        },
        want: { tools: [{ name: 'get_weather', description: 'Weather', parameters: WEATHER_SCHEMA, strict: true }] },
      },
    ],
    [
      'a tool without parameters and with strict null',
      {
        given: { tools: [{ type: 'function', function: { name: 'now', strict: null } }] },
        want: { tools: [{ name: 'now', parameters: { type: 'object', properties: {} } }] },
      },
    ],
    ['tool_choice none', { given: { tool_choice: 'none' }, want: { toolChoice: { type: 'none' } } }],
    ['tool_choice auto', { given: { tool_choice: 'auto' }, want: { toolChoice: { type: 'auto' } } }],
    ['tool_choice required', { given: { tool_choice: 'required' }, want: { toolChoice: { type: 'required' } } }],
    [
      'a named tool_choice',
      {
        given: { tool_choice: { type: 'function', function: { name: 'get_weather' } } },
        want: { toolChoice: { type: 'tool', name: 'get_weather' } },
      },
    ],
    ['parallel_tool_calls', { given: { parallel_tool_calls: false }, want: { parallelToolCalls: false } }],
    ['max_tokens', { given: { max_tokens: 100 }, want: { maxOutputTokens: 100 } }],
    ['max_completion_tokens', { given: { max_completion_tokens: 50 }, want: { maxOutputTokens: 50 } }],
    [
      'max_completion_tokens winning over max_tokens',
      { given: { max_tokens: 10, max_completion_tokens: 500 }, want: { maxOutputTokens: 500 } },
    ],
    [
      'max_tokens when max_completion_tokens is null',
      { given: { max_tokens: 10, max_completion_tokens: null }, want: { maxOutputTokens: 10 } },
    ],
    ['stop as a string', { given: { stop: 'END' }, want: { stopSequences: ['END'] } }],
    ['stop as an array', { given: { stop: ['a', 'b'] }, want: { stopSequences: ['a', 'b'] } }],
    [
      'sampling, seed and user',
      {
        given: { temperature: 0.2, top_p: 0.9, top_k: 40, seed: 7, user: 'u-1' },
        want: { temperature: 0.2, topP: 0.9, topK: 40, seed: 7, user: 'u-1' },
      },
    ],
    [
      'nulls as absent',
      { given: { temperature: null, top_p: null, stop: null, seed: null, max_tokens: null }, want: {} },
    ],
    [
      'response_format text',
      { given: { response_format: { type: 'text' } }, want: { responseFormat: { type: 'text' } } },
    ],
    [
      'response_format json_object',
      { given: { response_format: { type: 'json_object' } }, want: { responseFormat: { type: 'json' } } },
    ],
    [
      'response_format json_schema',
      {
        given: {
          response_format: {
            type: 'json_schema',
            json_schema: { name: 'weather', description: 'd', schema: WEATHER_SCHEMA, strict: true },
          },
        },
        want: {
          responseFormat: {
            type: 'json-schema',
            name: 'weather',
            description: 'd',
            schema: WEATHER_SCHEMA,
            strict: true,
          },
        },
      },
    ],
    ['reasoning_effort', { given: { reasoning_effort: 'high' }, want: { reasoning: { effort: 'high' } } }],
  ];
  it.each(cases)('decodes %s', (_name, { given, want }) => {
    const { options, warnings } = decode(given);
    expect(options).toEqual({ messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], ...want });
    expect(warnings).toEqual([]);
  });

  it('reports model, stream and include_usage', () => {
    expect(decode({ model: 'gpt-x', stream: true, stream_options: { include_usage: true } })).toMatchObject({
      model: 'gpt-x',
      stream: true,
      includeUsage: true,
    });
    expect(decode({ stream: false, stream_options: { include_usage: true } })).toMatchObject({
      stream: false,
      includeUsage: false,
    });
    expect(decode({ stream: true })).toMatchObject({ stream: true, includeUsage: false });
  });

  it('rejects n greater than 1 with param n and accepts n = 1', () => {
    expect(() => decode({ n: 2 })).toThrow(ApiError);
    try {
      decode({ n: 3 });
    } catch (error) {
      expect((error as ApiError).status).toBe(400);
      expect((error as ApiError).param).toBe('n');
    }
    expect(decode({ n: 1 }).warnings).toEqual([]);
  });

  it('warns once for each field it cannot honour, and drops it', () => {
    const { options, warnings } = decode({
      logit_bias: { '50256': -100 },
      logprobs: true,
      top_logprobs: 3,
      frequency_penalty: 0.5,
      presence_penalty: 0.5,
      modalities: ['text', 'audio'],
      audio: { voice: 'alloy', format: 'mp3' },
      prediction: { type: 'content', content: 'x' },
      web_search_options: {},
      service_tier: 'flex',
      store: true,
      metadata: { a: 'b' },
      verbosity: 'low',
      prompt_cache_key: 'k',
      safety_identifier: 'hash',
      min_p: 0.1,
      stream_options: { include_usage: true, include_obfuscation: true },
      messages: [
        { role: 'user', content: 'a', name: 'alice' },
        { role: 'user', content: 'b', name: 'bob' },
      ],
      tools: [
        { type: 'custom', custom: { name: 'grammar' } },
        { type: 'custom', custom: { name: 'other' } },
      ],
    });
    expect(warnings.map((warning) => warning.field)).toEqual([
      'messages[].name',
      'tools[].type',
      'stream_options.include_obfuscation',
      'logit_bias',
      'logprobs',
      'top_logprobs',
      'frequency_penalty',
      'presence_penalty',
      'modalities',
      'audio',
      'prediction',
      'web_search_options',
      'service_tier',
      'store',
      'metadata',
      'verbosity',
      'prompt_cache_key',
      'safety_identifier',
      'min_p',
    ]);
    expect(options.tools).toBeUndefined();
  });

  it('does not warn for values that ask for nothing', () => {
    const { warnings } = decode({
      logprobs: false,
      top_logprobs: 0,
      frequency_penalty: 0,
      presence_penalty: 0,
      modalities: ['text'],
      service_tier: 'auto',
      store: false,
      metadata: {},
      logit_bias: null,
      stream: false,
    });
    expect(warnings).toEqual([]);
  });

  it('maps allowed_tools to its mode with a warning', () => {
    const { options, warnings } = decode({
      tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'required', tools: [] } },
    });
    expect(options.toolChoice).toEqual({ type: 'required' });
    expect(warnings.map((warning) => warning.field)).toEqual(['tool_choice.allowed_tools']);
  });
});
