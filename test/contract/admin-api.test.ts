/**
 * The admin API (`/admin/v1`) on a real app: every operation, who may call it (the OMNIGATE_ADMIN_KEY, an
 * admin key of the key store; never an API key, which gets 401, and either admin key is refused on /v1 with 403),
 * bad input as 400s naming the field, and limits that take effect: a key given rpm 2 here is refused on its 3rd
 * call, a limit changed on a key already in use holds from its next call, and a project's limit stricter than
 * its key's applies. Also `GET /v1/usage/summary` and the admin's summary agree with `GET /v1/usage`'s records.
 */
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { createAdminClient, OmnigateError } from '../../client/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/create-test-app.js';

const ADMIN = 'admin-secret-for-tests-0123456789abcdef';
const admin = { authorization: `Bearer ${ADMIN}` };

const opened: TestApp[] = [];
afterEach(async () => {
  for (const app of opened.splice(0)) {
    await app.services.close();
  }
});

async function open(): Promise<TestApp> {
  const app = await createTestApp({ adminKey: ADMIN });
  opened.push(app);
  return app;
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

describe('admin API', () => {
  it('refuses callers without the admin key: none 401, an API key 401; an admin key is refused on /v1 (403)', async () => {
    const { app, key } = await open();
    const none = await request(app).get('/admin/v1/keys');
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe('admin_key_required');
    const apiKey = await request(app).get('/admin/v1/keys').set(bearer(key));
    expect(apiKey.status).toBe(401);
    expect(apiKey.body.error.code).toBe('admin_key_required');
    const apiKeyProject = await request(app).delete('/admin/v1/projects/x').set(bearer(key));
    expect(apiKeyProject.status).toBe(401);

    const created = await request(app).post('/admin/v1/keys').set(admin).send({ name: 'ops', admin: true });
    expect(created.status).toBe(201);
    expect(created.body.admin).toBe(true);
    const adminKey = created.body.key as string;
    expect((await request(app).get('/admin/v1/projects').set(bearer(adminKey))).status).toBe(200);
    const onV1 = await request(app).get('/v1/models').set(bearer(adminKey));
    expect(onV1.status).toBe(403);
    expect(onV1.body.error.code).toBe('admin_key_not_api_key');
    // Revoked, the admin key opens nothing.
    expect((await request(app).delete(`/admin/v1/keys/${created.body.id}`).set(admin)).status).toBe(200);
    expect((await request(app).get('/admin/v1/projects').set(bearer(adminKey))).status).toBe(401);
  });

  it('refuses OMNIGATE_ADMIN_KEY on /v1 and /anthropic with 403 admin_key_not_api_key, as a stored admin key, never echoing it', async () => {
    const { app, key } = await open();
    for (const call of [
      request(app).get('/v1/models').set(admin),
      request(app).post('/v1/chat/completions').set(admin).send({ model: 'x', messages: [] }),
    ]) {
      const answer = await call;
      expect(answer.status).toBe(403);
      expect(answer.body.error.code).toBe('admin_key_not_api_key');
      expect(JSON.stringify(answer.body)).not.toContain(ADMIN);
    }
    // Anthropic's envelope has no code: its permission error, with the same message.
    const anthropic = await request(app).get('/anthropic/v1/models').set('x-api-key', ADMIN);
    expect(anthropic.status).toBe(403);
    expect(anthropic.body.error.type).toBe('permission_error');
    expect(anthropic.body.error.message).toContain('admin key');
    expect(JSON.stringify(anthropic.body)).not.toContain(ADMIN);
    // A wrong key is still an invalid API key, and an API key still works.
    const wrong = await request(app)
      .get('/v1/models')
      .set(bearer(`${ADMIN}x`));
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe('invalid_api_key');
    expect((await request(app).get('/v1/models').set(bearer(key))).status).toBe(200);
  });

  it('keys: create (secret once), list, get, update, revoke', async () => {
    const { app } = await open();
    expect((await request(app).post('/admin/v1/projects').set(admin).send({ name: 'research' })).status).toBe(201);
    const created = await request(app)
      .post('/admin/v1/keys')
      .set(admin)
      .send({
        name: 'batch',
        project: 'research',
        limits: { rpm: 60, tpm: 1000, max_parallel: 2, budget_usd: 5, budget_period: 'day' },
      });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      object: 'admin.key',
      name: 'batch',
      project: 'research',
      admin: false,
      limits: { rpm: 60, tpm: 1000, max_parallel: 2, budget_usd: 5, budget_period: 'day' },
      revoked_at: null,
    });
    expect(created.body.key).toMatch(/^og-/);
    const id = created.body.id as string;

    const list = await request(app).get('/admin/v1/keys').set(admin);
    expect(list.status).toBe(200);
    const listed = list.body.data.find((key: { id: string }) => key.id === id);
    expect(listed).toMatchObject({ name: 'batch', project: 'research' });
    expect(JSON.stringify(list.body)).not.toContain(created.body.key);

    const got = await request(app).get(`/admin/v1/keys/${id}`).set(admin);
    expect(got.status).toBe(200);
    expect(got.body.key).toBeUndefined();

    const updated = await request(app)
      .patch(`/admin/v1/keys/${id}`)
      .set(admin)
      .send({ name: 'batch-2', project: null, limits: { rpm: 10, budget_usd: null, budget_period: null } });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      name: 'batch-2',
      project: null,
      limits: { rpm: 10, tpm: 1000, max_parallel: 2 },
    });
    expect(updated.body.limits.budget_usd).toBeUndefined();

    const revoked = await request(app).delete(`/admin/v1/keys/${id}`).set(admin);
    expect(revoked.status).toBe(200);
    expect(revoked.body.revoked_at).toEqual(expect.any(Number));
    expect((await request(app).get('/v1/models').set(bearer(created.body.key))).status).toBe(401);
    expect((await request(app).delete(`/admin/v1/keys/${id}`).set(admin)).status).toBe(404);
    expect((await request(app).get('/admin/v1/keys/key_nope').set(admin)).status).toBe(404);
    expect((await request(app).patch('/admin/v1/keys/key_nope').set(admin).send({ name: 'x' })).status).toBe(404);
  });

  it('projects: create, conflict, list, get, update, delete', async () => {
    const { app } = await open();
    const created = await request(app)
      .post('/admin/v1/projects')
      .set(admin)
      .send({ name: 'team-a', limits: { rpm: 100, budget_usd: 20 } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'team-a', object: 'project', limits: { rpm: 100, budget_usd: 20 } });
    const again = await request(app).post('/admin/v1/projects').set(admin).send({ name: 'team-a' });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('project_exists');
    const list = await request(app).get('/admin/v1/projects').set(admin);
    expect(list.body.data.map((project: { name: string }) => project.name)).toEqual(['team-a']);
    expect((await request(app).get('/admin/v1/projects/team-a').set(admin)).body.limits).toEqual({
      rpm: 100,
      budget_usd: 20,
    });
    const updated = await request(app)
      .patch('/admin/v1/projects/team-a')
      .set(admin)
      .send({ limits: { rpm: 50, budget_usd: null } });
    expect(updated.status).toBe(200);
    expect(updated.body.limits).toEqual({ rpm: 50 });
    const deleted = await request(app).delete('/admin/v1/projects/team-a').set(admin);
    expect(deleted.body).toEqual({ name: 'team-a', object: 'project.deleted', deleted: true });
    expect((await request(app).get('/admin/v1/projects/team-a').set(admin)).status).toBe(404);
    expect((await request(app).delete('/admin/v1/projects/team-a').set(admin)).status).toBe(404);
    expect((await request(app).patch('/admin/v1/projects/team-a').set(admin).send({ limits: {} })).status).toBe(404);
  });

  it('refuses negative, huge, fractional or non-numeric limits, an unknown project and a bad name, naming the field', async () => {
    const { app } = await open();
    const cases: Array<[unknown, string]> = [
      [{ rpm: -1 }, 'rpm'],
      [{ tpm: 1e13 }, 'tpm'],
      [{ max_parallel: 1.5 }, 'max_parallel'],
      [{ budget_usd: 'ten' }, 'budget_usd'],
      [{ budget_period: 'week' }, 'budget_period'],
      [{ rpms: 1 }, 'rpms'],
    ];
    for (const [limits, field] of cases) {
      const refused = await request(app).post('/admin/v1/keys').set(admin).send({ name: 'x', limits });
      expect(refused.status, JSON.stringify(limits)).toBe(400);
      expect(`${refused.body.error.param} ${refused.body.error.message}`).toContain(field);
      const onProject = await request(app).post('/admin/v1/projects').set(admin).send({ name: 'p', limits });
      expect(onProject.status).toBe(400);
    }
    const unknown = await request(app).post('/admin/v1/keys').set(admin).send({ project: 'ghost' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: 'unknown_project', param: 'project' });
    const badName = await request(app).post('/admin/v1/projects').set(admin).send({ name: 'has space' });
    expect(badName.status).toBe(400);
    expect(badName.body.error.message).toContain('name');
    const badQuery = await request(app).get('/admin/v1/usage/summary?group_by=week').set(admin);
    expect(badQuery.status).toBe(400);
    // Nothing was created by the refusals.
    expect((await request(app).get('/admin/v1/projects').set(admin)).body.data).toEqual([]);
  });

  it('a limit set over the admin API takes effect on the next call', async () => {
    const { app, key, keyId } = await open();
    const created = await request(app)
      .post('/admin/v1/keys')
      .set(admin)
      .send({ name: 'limited', limits: { rpm: 2 } });
    const limited = bearer(created.body.key);
    expect((await request(app).get('/v1/models').set(limited)).status).toBe(200);
    expect((await request(app).get('/v1/models').set(limited)).status).toBe(200);
    const third = await request(app).get('/v1/models').set(limited);
    expect(third.status).toBe(429);
    expect(third.body.error.code).toBe('rate_limit_exceeded');

    // The test app's own key is in use (held by the key cache) when its limit is set: the next call obeys it.
    expect((await request(app).get('/v1/models').set(bearer(key))).status).toBe(200);
    expect(
      (
        await request(app)
          .patch(`/admin/v1/keys/${keyId}`)
          .set(admin)
          .send({ limits: { rpm: 1 } })
      ).status,
    ).toBe(200);
    expect((await request(app).get('/v1/models').set(bearer(key))).status).toBe(200);
    expect((await request(app).get('/v1/models').set(bearer(key))).status).toBe(429);
    // Cleared, the limit no longer holds.
    await request(app)
      .patch(`/admin/v1/keys/${keyId}`)
      .set(admin)
      .send({ limits: { rpm: null } });
    expect((await request(app).get('/v1/models').set(bearer(key))).status).toBe(200);
  });

  it("a project's limit stricter than its key's applies, to all its keys together", async () => {
    const { app } = await open();
    await request(app)
      .post('/admin/v1/projects')
      .set(admin)
      .send({ name: 'tight', limits: { rpm: 2 } });
    const one = await request(app)
      .post('/admin/v1/keys')
      .set(admin)
      .send({ project: 'tight', limits: { rpm: 50 } });
    const two = await request(app).post('/admin/v1/keys').set(admin).send({ project: 'tight' });
    expect((await request(app).get('/v1/models').set(bearer(one.body.key))).status).toBe(200);
    expect((await request(app).get('/v1/models').set(bearer(two.body.key))).status).toBe(200);
    const refused = await request(app).get('/v1/models').set(bearer(one.body.key));
    expect(refused.status).toBe(429);
    expect(refused.body.error.message).toContain('project');
    // Loosened over the admin API, the project admits again.
    await request(app)
      .patch('/admin/v1/projects/tight')
      .set(admin)
      .send({ limits: { rpm: 100 } });
    expect((await request(app).get('/v1/models').set(bearer(one.body.key))).status).toBe(200);
  });
});

describe('usage summary', () => {
  it("agrees with GET /v1/usage's records, for a key's own and across keys", async () => {
    const { app, key, keyId } = await open();
    await request(app).post('/admin/v1/projects').set(admin).send({ name: 'alpha' });
    await request(app).patch(`/admin/v1/keys/${keyId}`).set(admin).send({ project: 'alpha' });
    const other = await request(app).post('/admin/v1/keys').set(admin).send({ name: 'other' });
    const chat = (content: string) => ({ model: 'local:chat', messages: [{ role: 'user', content }] });
    for (const text of ['hello there', 'a longer question about things', 'bye']) {
      expect((await request(app).post('/v1/chat/completions').set(bearer(key)).send(chat(text))).status).toBe(200);
    }
    await request(app).post('/v1/chat/completions').set(bearer(other.body.key)).send(chat('other key'));
    await request(app).get('/v1/models').set(bearer(key));

    const own = await request(app).get('/v1/usage/summary?group_by=model').set(bearer(key));
    expect(own.status).toBe(200);
    expect(own.body.object).toBe('usage.summary');
    // The records as GET /v1/usage lists them now, less the summary's own call (recorded after it answered).
    const listed = (await request(app).get('/v1/usage?limit=100').set(bearer(key))).body.data as Array<{
      operation: string;
      model: string | null;
      model_requested: string | null;
      input_tokens: number;
      output_tokens: number;
      cost_usd: number;
    }>;
    const records = listed.filter((record) => record.operation !== 'getUsageSummary');
    expect(listed.length - records.length).toBe(1);
    const expected = new Map<string, { requests: number; input_tokens: number; output_tokens: number }>();
    for (const record of records) {
      const group = record.model ?? record.model_requested ?? '';
      const into = expected.get(group) ?? { requests: 0, input_tokens: 0, output_tokens: 0 };
      into.requests++;
      into.input_tokens += record.input_tokens;
      into.output_tokens += record.output_tokens;
      expected.set(group, into);
    }
    expect(own.body.data.length).toBe(expected.size);
    for (const group of own.body.data) {
      expect(group).toMatchObject({ ...expected.get(group.group), group: group.group });
    }
    expect(expected.get('local:chat')?.requests).toBe(3);
    // Each later summary also counts the calls made since: the list and the summaries before it.
    const byDay = await request(app).get('/v1/usage/summary').set(bearer(key));
    expect(byDay.body.group_by).toBe('day');
    expect(byDay.body.data.reduce((sum: number, group: { requests: number }) => sum + group.requests, 0)).toBe(
      listed.length + 1,
    );
    const byProject = await request(app).get('/v1/usage/summary?group_by=project').set(bearer(key));
    expect(byProject.body.data).toEqual([expect.objectContaining({ group: 'alpha', requests: listed.length + 2 })]);

    const acrossKeys = await request(app).get('/admin/v1/usage/summary?group_by=key').set(admin);
    expect(acrossKeys.status).toBe(200);
    const groups = Object.fromEntries(
      acrossKeys.body.data.map((group: { group: string; requests: number }) => [group.group, group.requests]),
    );
    expect(groups[keyId]).toBe(listed.length + 3);
    expect(groups[other.body.id]).toBe(1);
    const projects = await request(app).get('/admin/v1/usage/summary?group_by=project').set(admin);
    const byName = Object.fromEntries(
      projects.body.data.map((group: { group: string; requests: number }) => [group.group, group.requests]),
    );
    expect(byName.alpha).toBe(listed.length + 3);
    expect(byName['']).toBeGreaterThanOrEqual(1);
    const oneProject = await request(app).get('/admin/v1/usage/summary?group_by=key&project=alpha').set(admin);
    expect(oneProject.body.data.map((group: { group: string }) => group.group)).toEqual([keyId]);
  });
});

describe('typed admin client', () => {
  it('runs every admin operation against the real server, and throws OmnigateError on a refusal', async () => {
    const { app } = await open();
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const adminClient = createAdminClient({ baseUrl, adminKey: ADMIN });
      expect(await adminClient.createProject({ name: 'ml', limits: { rpm: 9 } })).toMatchObject({ name: 'ml' });
      expect((await adminClient.listProjects()).map((project) => project.name)).toEqual(['ml']);
      expect((await adminClient.getProject('ml')).limits).toEqual({ rpm: 9 });
      expect((await adminClient.updateProject('ml', { limits: { rpm: null, tpm: 5 } })).limits).toEqual({ tpm: 5 });
      const created = await adminClient.createKey({ name: 'sdk', project: 'ml', limits: { budget_usd: 1 } });
      expect(created.key).toMatch(/^og-/);
      expect((await adminClient.getKey(created.id)).project).toBe('ml');
      expect((await adminClient.updateKey(created.id, { name: 'sdk-2' })).name).toBe('sdk-2');
      expect((await adminClient.listKeys()).some((key) => key.id === created.id)).toBe(true);
      expect((await adminClient.usageSummary({ group_by: 'key' })).object).toBe('usage.summary');
      expect((await adminClient.revokeKey(created.id)).revoked_at).not.toBeNull();
      expect(await adminClient.deleteProject('ml')).toMatchObject({ deleted: true });
      const refused = await createAdminClient({ baseUrl, adminKey: 'wrong' })
        .listKeys()
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(OmnigateError);
      expect((refused as OmnigateError).status).toBe(401);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
