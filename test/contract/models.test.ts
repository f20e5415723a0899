/**
 * Models: GET /v1/models lists the built-in and configured models with their aliases and the routing
 * rules; `model` resolves ids, aliases, `provider:model` names and routed names; unknown names are a 404
 * that says where to look.
 */
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { ModelConfig, ProviderConfig, RouteConfig } from '../../server/config.js';
import { startFakeUpstream, type FakeUpstream } from '../fakes/fake-upstream.js';
import { openAIFixture as fixture } from '../fakes/fixtures.js';
import { expectOpenAIError, expectRequestId, usageOf } from '../helpers/contract-assertions.js';
import { createTestApp } from '../helpers/create-test-app.js';
import { assertMatchesSchema } from '../helpers/spec-schemas.js';

const LOCAL_CHAT = {
  id: 'local:chat',
  object: 'model',
  created: 1767225600,
  owned_by: 'local',
  type: 'chat',
  aliases: ['local-chat', 'reference'],
  provider: 'local',
};
/** The built-in media, search and embedding models, listed after local:chat. */
const LOCAL_MEDIA = [
  {
    id: 'local:image',
    object: 'model',
    created: 1767225600,
    owned_by: 'local',
    type: 'image',
    aliases: ['local-image'],
    provider: 'local',
  },
  {
    id: 'local:speech',
    object: 'model',
    created: 1767225600,
    owned_by: 'local',
    type: 'speech',
    aliases: ['local:tts', 'local-speech'],
    provider: 'local',
  },
  {
    id: 'local:music',
    object: 'model',
    created: 1767225600,
    owned_by: 'local',
    type: 'music',
    aliases: ['local-music'],
    provider: 'local',
  },
  {
    id: 'local:video',
    object: 'model',
    created: 1767225600,
    owned_by: 'local',
    type: 'video',
    aliases: ['local-video'],
    provider: 'local',
  },
  {
    id: 'local:search',
    object: 'model',
    created: 1767225600,
    owned_by: 'local',
    type: 'search',
    aliases: ['local-search'],
    provider: 'local',
  },
  {
    id: 'local:embed',
    object: 'model',
    created: 1767225600,
    owned_by: 'local',
    type: 'embedding',
    aliases: ['local-embed'],
    provider: 'local',
  },
];

/** The routes Omnigate adds for coding agents' own model names when no other rule matched (agent_routes). */
const AGENT_ROUTES = [
  { pattern: 'claude-*', target: 'local:chat' },
  { pattern: 'gpt-*', target: 'local:chat' },
  { pattern: 'o1*', target: 'local:chat' },
  { pattern: 'o3*', target: 'local:chat' },
  { pattern: 'o4*', target: 'local:chat' },
  { pattern: 'codex-*', target: 'local:chat' },
];

function fakeProvider(upstream: FakeUpstream): ProviderConfig {
  return {
    id: 'fake',
    type: 'openai-compatible',
    base_url: `${upstream.origin}/v1`,
    timeout_ms: 5000,
    max_connections: 2,
    headers: {},
    responses: 'translate',
  };
}

async function withUpstream(run: (upstream: FakeUpstream) => Promise<void>): Promise<void> {
  const upstream = await startFakeUpstream((_request, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(fixture('text.json'));
  });
  try {
    await run(upstream);
  } finally {
    await upstream.close();
  }
}

describe('GET /v1/models', () => {
  it('lists the built-in reference model local:chat and the built-in media models with their aliases', async () => {
    const { app, key } = await createTestApp();
    const res = await request(app).get('/v1/models').set('authorization', `Bearer ${key}`);
    expect(res.status).toBe(200);
    expectRequestId(res);
    assertMatchesSchema('ModelList', res.body);
    expect(res.body).toEqual({ object: 'list', data: [LOCAL_CHAT, ...LOCAL_MEDIA], routes: AGENT_ROUTES });
  });

  it('lists configured models, aliases and routing rules, user rules first', async () => {
    await withUpstream(async (upstream) => {
      const models: ModelConfig[] = [
        { provider: 'fake', model: 'gpt-4o-mini', type: 'chat', aliases: ['fast'] },
        { provider: 'fake', model: 'text-embed', id: 'house-model', type: 'chat', aliases: [] },
      ];
      const routes: RouteConfig[] = [
        { pattern: 'gpt-*', provider: 'fake' },
        { pattern: 'mini-*', model: 'fake:gpt-4o-mini' },
      ];
      const { app, key } = await createTestApp({
        providers: [fakeProvider(upstream)],
        models,
        aliases: { mini: 'fast' },
        routes,
      });
      const res = await request(app).get('/v1/models').set('authorization', `Bearer ${key}`);
      expect(res.status).toBe(200);
      expectRequestId(res);
      assertMatchesSchema('ModelList', res.body);
      expect(res.body).toEqual({
        object: 'list',
        data: [
          LOCAL_CHAT,
          ...LOCAL_MEDIA,
          {
            id: 'fake:gpt-4o-mini',
            object: 'model',
            created: 0,
            owned_by: 'fake',
            type: 'chat',
            aliases: ['fast', 'mini'],
            provider: 'fake',
          },
          {
            id: 'house-model',
            object: 'model',
            created: 0,
            owned_by: 'fake',
            type: 'chat',
            aliases: [],
            provider: 'fake',
          },
        ],
        // With exactly one OpenAI-compatible upstream, the agent routes send OpenAI names there, each under its own name.
        routes: [
          { pattern: 'gpt-*', target: 'fake:*' },
          { pattern: 'mini-*', target: 'fake:gpt-4o-mini' },
          AGENT_ROUTES[0],
          ...AGENT_ROUTES.slice(1).map(({ pattern }) => ({ pattern, target: 'fake:*' })),
        ],
      });
      expect(upstream.requests).toEqual([]);
    });
  });
});

describe('model resolution', () => {
  it.each([['local:chat'], ['local-chat'], ['reference']])(
    'answers %s as the resolved model local:chat',
    async (model) => {
      const { app, key } = await createTestApp();
      const res = await request(app)
        .post('/v1/chat/completions')
        .set('authorization', `Bearer ${key}`)
        .send({ model, messages: [{ role: 'user', content: 'Which model are you?' }] });
      expect(res.status).toBe(200);
      expectRequestId(res);
      expect(res.body.model).toBe('local:chat');
      expect(res.body.choices[0].message.content).toBe('You said: Which model are you?');
    },
  );

  it('names the resolved model in every streamed chunk', async () => {
    const { app, key } = await createTestApp();
    const res = await request(app)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${key}`)
      .send({ model: 'reference', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(200);
    expectRequestId(res);
    const models = new Set(
      res.text
        .split('\n')
        .filter((line) => line.startsWith('data: {'))
        .map((line) => (JSON.parse(line.slice(6)) as { model: string }).model),
    );
    expect([...models]).toEqual(['local:chat']);
  });

  it('answers an unknown model with 404 model_not_found pointing at GET /v1/models', async () => {
    const { app, key } = await createTestApp();
    const res = await request(app)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${key}`)
      .send({ model: 'mistral-large', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(404);
    expectRequestId(res);
    expectOpenAIError(res.body, {
      message: "The model 'mistral-large' does not exist. List the available models with GET /v1/models.",
      type: 'not_found_error',
      param: 'model',
      code: 'model_not_found',
    });
  });

  it('answers an unknown provider prefix with 404 model_not_found', async () => {
    const { app, key } = await createTestApp();
    const res = await request(app)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${key}`)
      .send({ model: 'nobody:chat', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(404);
    expectRequestId(res);
    expect(res.body.error.code).toBe('model_not_found');
  });

  it('sends a configured alias, a provider:model name and a routed name to the upstream with its own model name', async () => {
    await withUpstream(async (upstream) => {
      const { app, key } = await createTestApp({
        providers: [fakeProvider(upstream)],
        models: [{ provider: 'fake', model: 'gpt-4o-mini', type: 'chat', aliases: ['fast'] }],
        routes: [{ pattern: 'gpt-*', provider: 'fake' }],
      });
      const cases = [
        ['fast', 'gpt-4o-mini', 'fake:gpt-4o-mini'],
        ['fake:some-other-model', 'some-other-model', 'fake:some-other-model'],
        ['gpt-4.1', 'gpt-4.1', 'fake:gpt-4.1'],
      ] as const;
      for (const [requested, upstreamModel, resolved] of cases) {
        const res = await request(app)
          .post('/v1/chat/completions')
          .set('authorization', `Bearer ${key}`)
          .send({ model: requested, messages: [{ role: 'user', content: 'What is the capital of France?' }] });
        expect(res.status).toBe(200);
        const id = expectRequestId(res);
        expect((upstream.requests.at(-1)?.body as { model: string }).model).toBe(upstreamModel);
        const [record] = await usageOf(app, key, id);
        expect(record).toMatchObject({
          model_requested: requested,
          model: resolved,
          provider: 'fake',
          input_tokens: 1342,
          output_tokens: 8,
        });
      }
      expect(upstream.requests).toHaveLength(3);
    });
  });

  it("routes agents' model names that no rule of the user matches to the reference model, with a warning", async () => {
    const { app, key, logs } = await createTestApp();
    const res = await request(app)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${key}`)
      .send({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(200);
    const id = expectRequestId(res);
    expect(res.body.model).toBe('local:chat');
    const warning =
      "model 'claude-sonnet-4-5' is not configured; answered by 'local:chat' through the agent route 'claude-*' (configure the model or an upstream for it)";
    expect(res.headers['x-omnigate-warning']).toBe(warning);
    expect(logs.find((line) => line.requestId === id && line.level === 40)).toMatchObject({
      msg: warning,
      model: 'local:chat',
      route: 'claude-*',
    });
    const [record] = await usageOf(app, key, id);
    expect(record).toMatchObject({ model_requested: 'claude-sonnet-4-5', model: 'local:chat', provider: 'local' });
  });

  it.each([
    ['/v1/chat/completions', { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }],
    ['/v1/responses', { model: 'o4-mini', input: 'hi' }],
    ['/anthropic/v1/messages', { model: 'codex-mini', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }],
  ])('warns on %s when an OpenAI name is answered by the echo model, and only then', async (path, body) => {
    const { app, key } = await createTestApp();
    const standIn = await request(app).post(path).set('authorization', `Bearer ${key}`).send(body);
    expect(standIn.status).toBe(200);
    expect(standIn.headers['x-omnigate-warning']).toMatch(
      new RegExp(`^model '${body.model}' is not configured; answered by 'local:chat'`),
    );
    const configured = await request(app)
      .post(path)
      .set('authorization', `Bearer ${key}`)
      .send({ ...body, model: 'local:chat' });
    expect(configured.status).toBe(200);
    expect(configured.headers['x-omnigate-warning']).toBeUndefined();
  });

  it('sends gpt-*, o4* and codex-* names (typos too) to the one configured OpenAI-compatible upstream under their own names', async () => {
    await withUpstream(async (upstream) => {
      const { app, key } = await createTestApp({ providers: [fakeProvider(upstream)] });
      for (const model of ['gpt-4o', 'gpt-4oo', 'o4-mini', 'codex-mini-latest']) {
        const res = await request(app)
          .post('/v1/chat/completions')
          .set('authorization', `Bearer ${key}`)
          .send({ model, messages: [{ role: 'user', content: 'hi' }] });
        expect(res.status).toBe(200);
        expect(res.headers['x-omnigate-warning']).toBeUndefined();
        expect((upstream.requests.at(-1)?.body as { model: string }).model).toBe(model);
        const [record] = await usageOf(app, key, expectRequestId(res));
        expect(record).toMatchObject({ model_requested: model, model: `fake:${model}`, provider: 'fake' });
      }
      expect(upstream.requests).toHaveLength(4);
    });
  });

  it("with two OpenAI-compatible upstreams, leaves the choice to the user's routes: the stand-in answers, with its warning", async () => {
    await withUpstream(async (upstream) => {
      const providers = [fakeProvider(upstream), { ...fakeProvider(upstream), id: 'fake2' }];
      const { app, key } = await createTestApp({ providers });
      const res = await request(app)
        .post('/v1/chat/completions')
        .set('authorization', `Bearer ${key}`)
        .send({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
      expect(res.status).toBe(200);
      expect(res.body.model).toBe('local:chat');
      expect(res.headers['x-omnigate-warning']).toContain("agent route 'gpt-*'");
      expect(upstream.requests).toEqual([]);
    });
  });
});

describe('model types', () => {
  it('answers 400 wrong_model_type when a chat operation names a model of another type', async () => {
    const testApp = await createTestApp({
      models: [{ provider: 'local', model: 'picture', id: 'local:picture', type: 'image', aliases: ['pic'] }],
    });
    const res = await request(testApp.app)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${testApp.key}`)
      .send({ model: 'pic', messages: [{ role: 'user', content: 'Hi' }] });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      message: "The model 'pic' is of type image; this operation needs a model of type chat.",
      type: 'invalid_request_error',
      param: 'model',
      code: 'wrong_model_type',
    });
  });
});
