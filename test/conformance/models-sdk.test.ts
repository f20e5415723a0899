/**
 * Conformance: the models endpoints through the OFFICIAL SDKs against a real server — `openai.models.retrieve`,
 * `anthropic.models.list()` (auto-paging with `after_id`, and `before_id` backwards) and
 * `anthropic.models.retrieve`, with both ways of authenticating under /anthropic — and a key limited to some
 * models seeing only those in every list and a 404 for the others.
 */
import Anthropic, { NotFoundError as AnthropicNotFound } from '@anthropic-ai/sdk';
import OpenAI, { NotFoundError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertMatchesSchema } from '../helpers/spec-schemas.js';
import { startServer, type StartedServer } from './start-server.js';

/** Three more chat models on the built-in provider, so a list has pages; `house-b` has an alias. */
const HOUSE = ['house-a', 'house-b', 'house-c'];
const CHAT_IDS = ['local:chat', ...HOUSE];

let started: StartedServer;
let openai: OpenAI;
let anthropic: Anthropic;
let limitedKey: string;

beforeAll(async () => {
  started = await startServer({
    models: HOUSE.map((id) => ({
      provider: 'local',
      model: 'chat',
      id,
      type: 'chat' as const,
      aliases: id === 'house-b' ? ['bee'] : [],
    })),
  });
  openai = new OpenAI({ apiKey: started.key, baseURL: `${started.baseURL}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: started.key, baseURL: `${started.baseURL}/anthropic`, maxRetries: 0 });
  limitedKey = (await started.testApp.keys.create({ name: 'limited', allowedModels: ['bee', 'local:image'] })).key;
});

afterAll(async () => {
  await started?.close();
});

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to throw');
}

describe('openai.models.retrieve', () => {
  it("answers a model by id, and by alias with the model's own id", async () => {
    const model = await openai.models.retrieve('local:chat');
    expect(model).toMatchObject({
      id: 'local:chat',
      object: 'model',
      owned_by: 'local',
      type: 'chat',
      aliases: ['local-chat', 'reference'],
    });
    assertMatchesSchema('ModelObject', model);
    expect((await openai.models.retrieve('bee')).id).toBe('house-b');
  });

  it.each(['gpt-9', 'claude-sonnet-4-5'])(
    'answers %s (unknown, or only routed) with a 404 model_not_found',
    async (name) => {
      const error = await rejection(openai.models.retrieve(name));
      expect(error).toBeInstanceOf(NotFoundError);
      expect((error as NotFoundError).error).toMatchObject({
        type: 'not_found_error',
        code: 'model_not_found',
        param: 'model',
      });
      expect((error as NotFoundError).requestID).toMatch(/^req_/);
    },
  );
});

describe('anthropic.models', () => {
  it('list() pages through every chat model with after_id, in the list order', async () => {
    const seen: string[] = [];
    const pages: number[] = [];
    for await (const page of (await anthropic.models.list({ limit: 3 })).iterPages()) {
      pages.push(page.data.length);
      seen.push(...page.data.map((model) => model.id));
      assertMatchesSchema('AnthropicModelList', {
        data: page.data,
        has_more: page.has_more,
        first_id: page.first_id,
        last_id: page.last_id,
      });
    }
    expect(seen).toEqual(CHAT_IDS);
    expect(pages).toEqual([3, 1]);
    const items: string[] = [];
    for await (const model of anthropic.models.list({ limit: 2 })) {
      items.push(model.id);
    }
    expect(items).toEqual(CHAT_IDS);
    const first = (await anthropic.models.list()).data[0]!;
    expect(first).toMatchObject({ type: 'model', id: 'local:chat', display_name: 'local:chat', lifecycle: 'active' });
    expect(first.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
  });

  it('list({before_id}) pages backwards, and has_more says whether models come before', async () => {
    const page = await anthropic.models.list({ before_id: 'house-c', limit: 2 });
    expect(page.data.map((model) => model.id)).toEqual(['house-a', 'house-b']);
    expect([page.has_more, page.first_id, page.last_id]).toEqual([true, 'house-a', 'house-b']);
    const next = await page.getNextPage();
    expect(next.data.map((model) => model.id)).toEqual(['local:chat']);
    expect(next.has_more).toBe(false);
  });

  it('lifecycle filters as the SDK sends them (lifecycle[]=…): every model is active', async () => {
    expect(
      (await anthropic.models.list({ lifecycle: ['active', 'deprecated'] })).data.map((model) => model.id),
    ).toEqual(CHAT_IDS);
    expect((await anthropic.models.list({ lifecycle: ['retired'] })).data).toEqual([]);
  });

  it("an after_id that names no listed model is a 400 in Anthropic's envelope", async () => {
    const error = await rejection(anthropic.models.list({ after_id: 'nope' }));
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error' },
    });
  });

  it('retrieve() answers a chat model by id or alias and 404s other types and unknown names', async () => {
    expect(await anthropic.models.retrieve('bee')).toMatchObject({
      type: 'model',
      id: 'house-b',
      display_name: 'house-b',
    });
    for (const name of ['local:image', 'claude-nope']) {
      const error = await rejection(anthropic.models.retrieve(name));
      expect(error).toBeInstanceOf(AnthropicNotFound);
      expect((error as AnthropicNotFound).error).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    }
  });

  it('authenticates with x-api-key as well as Bearer', async () => {
    const response = await fetch(`${started.baseURL}/anthropic/v1/models`, {
      headers: { 'x-api-key': started.key, 'anthropic-version': '2023-06-01' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('request-id')).toMatch(/^req_/);
    expect(((await response.json()) as { data: unknown[] }).data).toHaveLength(CHAT_IDS.length);
    const refused = await fetch(`${started.baseURL}/anthropic/v1/models`, { headers: { 'x-api-key': 'og-wrong' } });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
  });
});

describe('a key limited to some models', () => {
  it('sees only its models in GET /v1/models, and only the routes it can use', async () => {
    const limited = new OpenAI({ apiKey: limitedKey, baseURL: `${started.baseURL}/v1`, maxRetries: 0 });
    const ids: string[] = [];
    for await (const model of limited.models.list()) {
      ids.push(model.id);
    }
    expect(ids).toEqual(['local:image', 'house-b']);
    const raw = await fetch(`${started.baseURL}/v1/models`, { headers: { authorization: `Bearer ${limitedKey}` } });
    // The agent routes all lead to local:chat, which this key may not use.
    expect(((await raw.json()) as { routes: unknown[] }).routes).toEqual([]);
    expect((await openai.models.list()).data.map((model) => model.id)).toEqual(
      expect.arrayContaining(['local:chat', 'house-a']),
    );
  });

  it('gets a 404 for a model it may not use, as for one that does not exist', async () => {
    const limited = new OpenAI({ apiKey: limitedKey, baseURL: `${started.baseURL}/v1`, maxRetries: 0 });
    expect((await limited.models.retrieve('house-b')).id).toBe('house-b');
    expect(await rejection(limited.models.retrieve('house-a'))).toBeInstanceOf(NotFoundError);
  });

  it('sees only its chat models in the Anthropic list', async () => {
    const limited = new Anthropic({ apiKey: limitedKey, baseURL: `${started.baseURL}/anthropic`, maxRetries: 0 });
    const page = await limited.models.list();
    expect(page.data.map((model) => model.id)).toEqual(['house-b']);
    expect(await rejection(limited.models.retrieve('local:chat'))).toBeInstanceOf(AnthropicNotFound);
  });
});
