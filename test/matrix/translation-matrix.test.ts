/**
 * The translation matrix: every caller dialect (chat completions, Responses, Anthropic Messages) × every provider
 * (the built-in `local:chat`; an OpenAI-compatible fake upstream with `responses: translate` and with
 * `responses: native`; an Anthropic fake upstream) × JSON and stream × the cases of `conversation.ts` (plain
 * text, a tool call whose arguments arrive in many fragments, a tool-result turn, a system prompt, an image,
 * a length stop, cache-heavy usage).
 *
 * Each cell asserts, at the far end: the exact text, the tool call's name and arguments (parsed JSON), the
 * dialect's finish/stop name and exact usage numbers (cache tokens included), with every SSE event we encode
 * validated against the contract; at the upstream: that it received ONE request in its own dialect, on its own
 * path, with the system prompt, image, tools and replayed tool turn in that dialect's places; and that the usage
 * record (`GET /v1/usage?request_id=…`) holds the upstream's numbers. Same-dialect pairs must be native
 * passthrough: the caller's unknown field (`x_custom`) reaches the upstream, a translated call drops it, and the
 * upstream's answer comes back byte for byte (JSON) or event for event (SSE; see the contract-gap tests at the end
 * for why those relayed events are not schema-validated).
 *
 * After the matrix: text before two parallel tool calls, and the Responses tool loop over `previous_response_id`
 * (field-lessons themes 1 and 3).
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProviderConfig } from '../../server/config.js';
import type { ChatResult, FinishReason } from '../../server/core/chat.js';
import { anthropicFixture, openAIFixture } from '../fakes/fixtures.js';
import { createTestApp, type TestApp } from '../helpers/create-test-app.js';
import { sseJson } from '../helpers/read-sse.js';
import { assertMatchesSchema } from '../helpers/spec-schemas.js';
import {
  CASE_NAMES,
  CASES,
  callerBody,
  chatIncludeUsage,
  DEFAULT_ANTHROPIC_MAX_TOKENS,
  referenceAnswer,
  WEATHER_ARGS,
  type CallerDialect,
  type CaseName,
  type Conversation,
} from './conversation.js';
import { assertCallerUsage, assertUsageRecord, expectedFinish, type ExpectedUsage } from './expectations.js';
import { readOutcome } from './read-outcome.js';
import { startScriptedAnthropic, startScriptedOpenAI, type ScriptedUpstream } from './scripted-upstreams.js';
import { assertUpstreamRequest, type UpstreamDialect } from './upstream-assertions.js';
import {
  anthropicJson,
  anthropicSse,
  chatCompletionJson,
  chatCompletionSse,
  responsesJson,
  responsesSse,
  type ScriptedAnswer,
  type ScriptedReply,
  type ScriptedUsage,
} from './upstream-scripts.js';

type ProviderName = 'local' | 'openai-translate' | 'openai-native' | 'anthropic';

interface ProviderCell {
  name: ProviderName;
  /** The model callers ask for. */
  model: string;
  /** The upstream's own model name (none for local). */
  upstreamModel?: string;
  providerId: string;
}

const PROVIDERS: ProviderCell[] = [
  { name: 'local', model: 'local:chat', providerId: 'local' },
  { name: 'openai-translate', model: 'oai:gpt-4.1-mini', upstreamModel: 'gpt-4.1-mini', providerId: 'oai' },
  { name: 'openai-native', model: 'oain:gpt-4.1-mini', upstreamModel: 'gpt-4.1-mini', providerId: 'oain' },
  { name: 'anthropic', model: 'anth:claude-sonnet-4-5', upstreamModel: 'claude-sonnet-4-5', providerId: 'anth' },
];

const DIALECTS: CallerDialect[] = ['chat', 'responses', 'anthropic'];
const MODES = ['json', 'stream'] as const;

const OPENAI_KEY = 'sk-upstream-openai-matrix';
const ANTHROPIC_KEY = 'sk-ant-upstream-matrix';
const EXTRA = { x_custom: 1 };
/** What the gateway sends an Anthropic upstream when an OpenAI-dialect caller set no limit (documented default). */
const GATEWAY_DEFAULT_MAX_TOKENS = 4096;
const OPENAI_CALL_ID = 'call_Qx4h2fXv9sLmP0aKdT3yRz1B';
const ANTHROPIC_CALL_ID = 'toolu_01T1x1fJ34qAmk2tNTrN7Up6';

/** Which dialect the upstream speaks for this caller, and whether the call is native passthrough. */
function route(
  provider: ProviderName,
  dialect: CallerDialect,
): { upstream: UpstreamDialect; passthrough: boolean } | null {
  switch (provider) {
    case 'local':
      return null;
    case 'openai-translate':
      return { upstream: 'openai-chat', passthrough: dialect === 'chat' };
    case 'openai-native':
      return dialect === 'responses'
        ? { upstream: 'openai-responses', passthrough: true }
        : { upstream: 'openai-chat', passthrough: dialect === 'chat' };
    case 'anthropic':
      return { upstream: 'anthropic-messages', passthrough: dialect === 'anthropic' };
  }
}

/** The usage the fake reports (in its own dialect's terms, see upstream-scripts.ts). */
function scriptedUsage(caseName: CaseName, upstream: UpstreamDialect): ScriptedUsage {
  const anthropic = upstream === 'anthropic-messages';
  if (caseName === 'usage') {
    return {
      input: 2200,
      output: 57,
      cacheRead: 2048,
      cacheWrite: anthropic ? 100 : 0,
      reasoning: anthropic ? 0 : 9,
      outputOnlyInDelta: true,
    };
  }
  return { input: 1200, output: 42, cacheRead: 1024, cacheWrite: anthropic ? 26 : 0, reasoning: 0 };
}

/** What the gateway must understand from the fake's usage: OpenAI reports no cache writes, Anthropic no reasoning. */
function canonicalFromScripted(usage: ScriptedUsage, upstream: UpstreamDialect): ExpectedUsage {
  return upstream === 'anthropic-messages'
    ? { input: usage.input, output: usage.output, cacheRead: usage.cacheRead, cacheWrite: usage.cacheWrite }
    : { input: usage.input, output: usage.output, cacheRead: usage.cacheRead, reasoning: usage.reasoning };
}

function scriptedReply(
  reference: ChatResult,
  upstream: UpstreamDialect,
  usage: ScriptedUsage,
  model: string,
): ScriptedReply {
  const text = reference.content
    .filter((part) => part.type === 'text')
    .map((part) => part.text)
    .join('');
  const call = reference.content.find((part) => part.type === 'tool-call');
  const finish = reference.finishReason as Extract<FinishReason, 'stop' | 'length' | 'tool-calls'>;
  return {
    text,
    toolCalls: call
      ? [
          {
            id: upstream === 'anthropic-messages' ? ANTHROPIC_CALL_ID : OPENAI_CALL_ID,
            name: call.name,
            arguments: call.arguments,
          },
        ]
      : [],
    finish,
    usage,
    model,
  };
}

function answerFor(upstream: UpstreamDialect, reply: ScriptedReply, body: Record<string, unknown>): ScriptedAnswer {
  const stream = body.stream === true;
  switch (upstream) {
    case 'openai-chat':
      return stream
        ? chatCompletionSse(
            reply,
            (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true,
          )
        : chatCompletionJson(reply);
    case 'openai-responses':
      return stream ? responsesSse(reply) : responsesJson(reply);
    case 'anthropic-messages':
      return stream ? anthropicSse(reply) : anthropicJson(reply);
  }
}

let testApp: TestApp;
let server: Server;
let baseURL: string;
const fakes: Partial<Record<ProviderName, ScriptedUpstream>> = {};

beforeAll(async () => {
  fakes['openai-translate'] = await startScriptedOpenAI();
  fakes['openai-native'] = await startScriptedOpenAI();
  fakes.anthropic = await startScriptedAnthropic();
  const common = { timeout_ms: 10_000, max_connections: 8, headers: {} };
  const providers: ProviderConfig[] = [
    {
      id: 'oai',
      type: 'openai-compatible',
      base_url: fakes['openai-translate'].baseUrl,
      api_key: OPENAI_KEY,
      responses: 'translate',
      ...common,
    },
    {
      id: 'oain',
      type: 'openai-compatible',
      base_url: fakes['openai-native'].baseUrl,
      api_key: OPENAI_KEY,
      responses: 'native',
      ...common,
    },
    {
      id: 'anth',
      type: 'anthropic',
      base_url: fakes.anthropic.baseUrl,
      api_key: ANTHROPIC_KEY,
      anthropic_version: '2023-06-01',
      ...common,
    },
  ];
  testApp = await createTestApp({ providers });
  server = testApp.app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  testApp?.shutdown.abort();
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await testApp?.registry.close();
  await testApp?.usage.close();
  testApp?.db.close();
  await Promise.all(Object.values(fakes).map((fake) => fake.close()));
});

const PATHS: Record<CallerDialect, string> = {
  chat: '/v1/chat/completions',
  responses: '/v1/responses',
  anthropic: '/anthropic/v1/messages',
};

/** Headers as each dialect's real clients send them (Anthropic clients: x-api-key + anthropic-version). */
function callerHeaders(dialect: CallerDialect): Record<string, string> {
  return dialect === 'anthropic'
    ? { 'content-type': 'application/json', 'x-api-key': testApp.key, 'anthropic-version': '2023-06-01' }
    : { 'content-type': 'application/json', authorization: `Bearer ${testApp.key}` };
}

/** The usage record of a request; written when the call ends, which may be just after the client has the answer. */
async function usageRecord(requestId: string): Promise<Record<string, unknown>> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const response = await fetch(`${baseURL}/v1/usage?request_id=${requestId}`, {
      headers: { authorization: `Bearer ${testApp.key}` },
    });
    expect(response.status).toBe(200);
    const page = (await response.json()) as { data: Array<Record<string, unknown>> };
    if (page.data.length > 0) {
      expect(page.data).toHaveLength(1);
      return page.data[0];
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`no usage record for ${requestId}`);
}

const CELLS = CASE_NAMES.flatMap((caseName) => MODES.map((mode) => ({ caseName, mode })));

describe.each(PROVIDERS)('provider $name', (provider) => {
  describe.each(DIALECTS)('caller %s', (dialect) => {
    it.each(CELLS)('$caseName ($mode)', async ({ caseName, mode }) => {
      const conversation = CASES[caseName];
      const stream = mode === 'stream';
      const path = route(provider.name, dialect);
      const fake = fakes[provider.name];
      const reference = await referenceAnswer(conversation, dialect);

      let expectedUsage: ExpectedUsage;
      if (path && fake) {
        const usage = scriptedUsage(caseName, path.upstream);
        const reply = scriptedReply(reference, path.upstream, usage, provider.upstreamModel!);
        fake.script((request) => answerFor(path.upstream, reply, request.body));
        expectedUsage = canonicalFromScripted(usage, path.upstream);
      } else {
        expectedUsage = {
          input: reference.usage.inputTokens,
          output: reference.usage.outputTokens,
          reasoning: reference.usage.reasoningTokens,
        };
      }

      const body = callerBody(dialect, conversation, provider.model, stream, EXTRA);
      if (dialect === 'chat' && stream && chatIncludeUsage(caseName)) {
        body.stream_options = { include_usage: true };
      }
      const response = await fetch(`${baseURL}${PATHS[dialect]}`, {
        method: 'POST',
        headers: callerHeaders(dialect),
        body: JSON.stringify(body),
      });
      const bodyText = await response.text();
      expect(response.status, bodyText.slice(0, 500)).toBe(200);
      expect(response.headers.get('content-type')).toMatch(stream ? /^text\/event-stream/ : /^application\/json/);
      const requestId = response.headers.get('x-request-id');
      expect(requestId).toMatch(/^req_/);

      // ---- the far end: what the caller got
      const outcome = readOutcome(dialect, stream, bodyText, { validate: !path?.passthrough });
      const referenceText = reference.content
        .filter((part) => part.type === 'text')
        .map((part) => part.text)
        .join('');
      expect(outcome.text).toBe(referenceText);
      if (caseName === 'image') {
        expect(outcome.text).toBe('You said: What is in this picture? (with 1 image)');
      }
      if (caseName === 'tool-result') {
        expect(outcome.text).toBe('Tool get_weather returned: {"temp_c":21,"sky":"clear"}');
      }
      const referenceCall = reference.content.find((part) => part.type === 'tool-call');
      if (referenceCall) {
        expect(outcome.toolCalls).toHaveLength(1);
        const [call] = outcome.toolCalls;
        expect(call.name).toBe('get_weather');
        expect(JSON.parse(call.arguments)).toEqual(JSON.parse(referenceCall.arguments));
        expect(JSON.parse(call.arguments)).toEqual(WEATHER_ARGS);
        if (path) {
          expect(call.id, 'the upstream’s tool call id reaches the caller').toBe(
            path.upstream === 'anthropic-messages' ? ANTHROPIC_CALL_ID : OPENAI_CALL_ID,
          );
        } else {
          expect(call.id).toMatch(/^call_/);
        }
        if (stream) {
          const upstreamChunks = fake?.answers()[0]?.argumentChunks[0];
          if (upstreamChunks !== undefined) {
            expect(upstreamChunks, 'the fake sent the arguments in many chunks').toBeGreaterThanOrEqual(10);
            expect(call.fragments, 'every argument fragment reaches the caller as its own delta').toBe(upstreamChunks);
          } else {
            expect(call.fragments).toBeGreaterThanOrEqual(10);
          }
        }
      } else {
        expect(outcome.toolCalls).toEqual([]);
      }
      expect(outcome.finish).toBe(expectedFinish(dialect, reference.finishReason));

      const callerWillSeeUsage = !(dialect === 'chat' && stream && !chatIncludeUsage(caseName));
      if (callerWillSeeUsage) {
        assertCallerUsage(dialect, outcome.usage, expectedUsage);
      } else {
        expect(outcome.usage, 'a chat stream without include_usage carries no usage').toBeNull();
      }

      // ---- the upstream: what it received
      if (path && fake) {
        const received = fake.received();
        expect(received, 'exactly one upstream request').toHaveLength(1);
        assertUpstreamRequest(received[0], {
          dialect: path.upstream,
          conversation,
          stream,
          model: provider.upstreamModel!,
          passthrough: path.passthrough,
          extra: EXTRA,
          upstreamKey: path.upstream === 'anthropic-messages' ? ANTHROPIC_KEY : OPENAI_KEY,
          callerKey: testApp.key,
          anthropicMaxTokens:
            conversation.maxTokens ??
            (dialect === 'anthropic' ? DEFAULT_ANTHROPIC_MAX_TOKENS : GATEWAY_DEFAULT_MAX_TOKENS),
        });
        if (path.passthrough) {
          const answer = fake.answers()[0];
          if (!stream) {
            expect(bodyText, 'a passthrough JSON answer comes back byte for byte').toBe(answer.body);
          } else {
            const dropUsageChunk = dialect === 'chat' && !chatIncludeUsage(caseName);
            const upstreamEvents = answer.events!.filter(
              (event) => !(dropUsageChunk && event.data.includes('"choices":[]')),
            );
            expect(
              outcome.events!.map((event) => event.data),
              'passthrough SSE data comes back unchanged',
            ).toEqual(upstreamEvents.map((event) => event.data));
            expect(outcome.events!.map((event) => event.event ?? null)).toEqual(
              upstreamEvents.map((event) => event.event ?? null),
            );
          }
        }
      }

      // ---- the usage record holds the upstream's numbers, also for passthrough and streams
      const record = await usageRecord(requestId!);
      assertUsageRecord(record, expectedUsage);
      expect(record.provider).toBe(provider.providerId);
      expect(record.model).toBe(provider.model);
    });
  });
});

/**
 * Beyond the matrix, the top complaint about gateways (field-lessons theme 1): a turn with text BEFORE several
 * tool calls (Claude nearly always writes a preamble), each call's arguments in many fragments. Every caller
 * dialect must get the text, then both calls in order with their own ids and arguments, and the tool-call stop.
 */
describe.each(PROVIDERS.filter((provider) => provider.name !== 'local'))(
  'provider $name: text then two parallel tool calls',
  (provider) => {
    const CALLS = [
      { city: 'Paris', unit: 'celsius', days: 3, note: 'first call' },
      { city: 'Tokyo', unit: 'fahrenheit', days: 5, note: 'second call, longer arguments' },
    ];
    const PREAMBLE = 'Let me check the weather in both cities.';

    it.each(DIALECTS.flatMap((dialect) => MODES.map((mode) => ({ dialect, mode }))))(
      'caller $dialect ($mode)',
      async ({ dialect, mode }) => {
        const stream = mode === 'stream';
        const path = route(provider.name, dialect)!;
        const fake = fakes[provider.name]!;
        const anthropic = path.upstream === 'anthropic-messages';
        const ids = anthropic
          ? ['toolu_01Parallel0000000000000A', 'toolu_01Parallel0000000000000B']
          : ['call_parallel000000000000A', 'call_parallel000000000000B'];
        const usage = scriptedUsage('tool-call', path.upstream);
        const reply: ScriptedReply = {
          text: PREAMBLE,
          toolCalls: CALLS.map((args, index) => ({
            id: ids[index],
            name: 'get_weather',
            arguments: JSON.stringify(args),
          })),
          finish: 'tool-calls',
          usage,
          model: provider.upstreamModel!,
        };
        fake.script((request) => answerFor(path.upstream, reply, request.body));
        const body = callerBody(dialect, CASES['tool-call'], provider.model, stream);
        if (dialect === 'chat' && stream) {
          body.stream_options = { include_usage: true };
        }
        const response = await fetch(`${baseURL}${PATHS[dialect]}`, {
          method: 'POST',
          headers: callerHeaders(dialect),
          body: JSON.stringify(body),
        });
        const bodyText = await response.text();
        expect(response.status, bodyText.slice(0, 500)).toBe(200);
        const outcome = readOutcome(dialect, stream, bodyText, { validate: !path.passthrough });
        expect(outcome.text).toBe(PREAMBLE);
        expect(
          outcome.toolCalls.map((call) => ({
            id: call.id,
            name: call.name,
            args: JSON.parse(call.arguments) as unknown,
          })),
        ).toEqual(CALLS.map((args, index) => ({ id: ids[index], name: 'get_weather', args })));
        if (stream) {
          expect(outcome.toolCalls.map((call) => call.fragments)).toEqual(fake.answers()[0].argumentChunks);
        }
        expect(outcome.finish).toBe(expectedFinish(dialect, 'tool-calls'));
        const expectedUsage = canonicalFromScripted(usage, path.upstream);
        assertCallerUsage(dialect, outcome.usage, expectedUsage);
        expect(fake.received()).toHaveLength(1);
        assertUsageRecord(await usageRecord(response.headers.get('x-request-id')!), expectedUsage);
      },
    );
  },
);

/**
 * Field-lessons theme 3: the Responses API bridged to a chat-style upstream breaks on multi-turn tool use with
 * `previous_response_id`. Turn 1 ends in a tool call; turn 2 sends only the `function_call_output` and the id of
 * turn 1, and the upstream must receive the whole conversation in its own dialect, the call and its result
 * linked by the upstream's own call id.
 */
describe.each(PROVIDERS.filter((provider) => provider.name !== 'openai-native'))(
  'provider $name: Responses tool loop over previous_response_id',
  (provider) => {
    it.each(MODES)('%s', async (mode) => {
      const stream = mode === 'stream';
      const path = route(provider.name, 'responses');
      const fake = fakes[provider.name];
      const first = CASES['tool-call'];
      const firstReference = await referenceAnswer(first, 'responses');
      if (path && fake) {
        const reply = scriptedReply(
          firstReference,
          path.upstream,
          scriptedUsage('tool-call', path.upstream),
          provider.upstreamModel!,
        );
        fake.script((request) => answerFor(path.upstream, reply, request.body));
      }
      const post = async (body: Record<string, unknown>) => {
        const response = await fetch(`${baseURL}/v1/responses`, {
          method: 'POST',
          headers: callerHeaders('responses'),
          body: JSON.stringify(body),
        });
        const text = await response.text();
        expect(response.status, text.slice(0, 500)).toBe(200);
        return readOutcome('responses', stream, text);
      };
      const turn1 = await post(callerBody('responses', first, provider.model, stream));
      expect(turn1.toolCalls).toHaveLength(1);
      const [call] = turn1.toolCalls;
      expect(JSON.parse(call.arguments)).toEqual(WEATHER_ARGS);
      expect(turn1.responseId).toMatch(/^resp_/);

      const result = '{"temp_c":21,"sky":"clear"}';
      const second: Conversation = { ...first, toolTurn: { id: call.id, name: call.name, args: WEATHER_ARGS, result } };
      const secondReference = await referenceAnswer(second, 'responses');
      if (path && fake) {
        const reply = scriptedReply(
          secondReference,
          path.upstream,
          scriptedUsage('tool-result', path.upstream),
          provider.upstreamModel!,
        );
        fake.script((request) => answerFor(path.upstream, reply, request.body));
      }
      const turn2 = await post({
        model: provider.model,
        previous_response_id: turn1.responseId,
        input: [{ type: 'function_call_output', call_id: call.id, output: result }],
        tools: (callerBody('responses', first, provider.model, stream) as { tools: unknown }).tools,
        ...(stream ? { stream: true } : {}),
      });
      expect(turn2.text).toBe(`Tool get_weather returned: ${result}`);
      expect(turn2.finish).toBe('completed');
      if (path && fake) {
        expect(fake.received()).toHaveLength(1);
        assertUpstreamRequest(fake.received()[0], {
          dialect: path.upstream,
          conversation: second,
          stream,
          model: provider.upstreamModel!,
          passthrough: false,
          extra: {},
          upstreamKey: path.upstream === 'anthropic-messages' ? ANTHROPIC_KEY : OPENAI_KEY,
          callerKey: testApp.key,
          anthropicMaxTokens: GATEWAY_DEFAULT_MAX_TOKENS,
        });
      }
    });
  },
);

/**
 * Native passthrough relays the upstream's events and JSON byte for byte (asserted above against what the fake
 * sent), so the contract must describe what real upstreams send, not only what Omnigate itself emits. Each entry
 * is a REAL recorded shape (the providers' fixtures) or the scripted equivalent, checked against the contract.
 */
describe('the contract describes real upstream shapes that passthrough relays', () => {
  const chatUsageChunk = sseJson(openAIFixture('tool-call-fragments.sse')).at(-1)!.data;
  const anthropicEvents = sseJson(anthropicFixture('text.sse')).map((event) => event.data);
  const responsesReply: ScriptedReply = {
    text: 'Hi',
    finish: 'stop',
    usage: { input: 3, output: 1, cacheRead: 0, cacheWrite: 0, reasoning: 0 },
    model: 'gpt-4.1-mini',
  };
  it.each([
    // ChatCompletionUsage.{prompt,completion}_tokens_details are closed: OpenAI sends audio_tokens, accepted/rejected_prediction_tokens.
    { name: 'chat chunk: usage details with audio_tokens', schema: 'ChatCompletionChunk', value: chatUsageChunk },
    // ChatCompletion message is closed: OpenAI sends `annotations: []`; usage details as above.
    {
      name: 'chat JSON: message.annotations, usage details',
      schema: 'ChatCompletion',
      value: JSON.parse(openAIFixture('text.json')) as unknown,
    },
    // AnthropicUsage is closed: Anthropic sends `cache_creation` (and `service_tier`).
    {
      name: 'anthropic message_start: usage.cache_creation',
      schema: 'AnthropicStreamEvent',
      value: anthropicEvents.find((event) => event.type === 'message_start'),
    },
    // The text block requires `citations`: Anthropic streams `{"type":"text","text":""}`.
    {
      name: 'anthropic content_block_start: text block without citations',
      schema: 'AnthropicStreamEvent',
      value: anthropicEvents.find((event) => event.type === 'content_block_start'),
    },
    {
      name: 'anthropic JSON: text block without citations, usage.cache_creation',
      schema: 'AnthropicMessage',
      value: JSON.parse(anthropicFixture('text.json')) as unknown,
    },
    // ResponseObject requires completed_at and output_text (an SDK convenience, not on OpenAI's wire) and is closed
    // (OpenAI sends background, max_tool_calls, top_logprobs).
    {
      name: 'responses JSON: OpenAI response object',
      schema: 'ResponseObject',
      value: JSON.parse(responsesJson(responsesReply).body) as unknown,
    },
    {
      name: 'responses response.completed event',
      schema: 'ResponseStreamEvent',
      value: JSON.parse(responsesSse(responsesReply).events!.at(-1)!.data) as unknown,
    },
  ])('$name matches $schema', ({ schema, value }) => {
    expect(value).toBeDefined();
    assertMatchesSchema(schema, value);
  });
});
