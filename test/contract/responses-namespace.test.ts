/**
 * Codex's namespaced tools through the whole route (validator, encoders, storage): a call of a function offered
 * inside `{type: "namespace"}` carries that `namespace` on its `function_call` item (JSON, every stream event and
 * the stored response), a plain function's call carries none, and a replayed call with `namespace` is accepted.
 */
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createTestApp } from '../helpers/create-test-app.js';
import { sseJson } from '../helpers/read-sse.js';
import { assertMatchesSchema } from '../helpers/spec-schemas.js';

const ARGS = '{"targets":["nobody"],"timeout_ms":10}';

const TOOLS = [
  {
    type: 'function',
    name: 'exec_command',
    description: 'Run a command',
    parameters: { type: 'object', properties: { cmd: { type: 'string' } } },
  },
  {
    type: 'namespace',
    name: 'multi_agent_v1',
    description: 'Sub-agents',
    tools: [
      {
        type: 'function',
        name: 'wait_agent',
        description: 'Wait for agents',
        parameters: { type: 'object', properties: { targets: { type: 'array' } } },
      },
    ],
  },
];

describe('Responses: calls of namespaced tools', () => {
  it('JSON: the call carries the namespace, the stored response keeps it, and the replayed call is accepted', async () => {
    const { app, key } = await createTestApp();
    const auth = { authorization: `Bearer ${key}` };
    const created = await request(app)
      .post('/v1/responses')
      .set(auth)
      .send({ model: 'local:chat', input: `call wait_agent ${ARGS}`, tools: TOOLS });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const call = created.body.output.find((item: { type: string }) => item.type === 'function_call');
    expect(call).toMatchObject({
      type: 'function_call',
      name: 'wait_agent',
      namespace: 'multi_agent_v1',
      arguments: ARGS,
      status: 'completed',
    });

    const stored = await request(app).get(`/v1/responses/${created.body.id}`).set(auth);
    expect(stored.status).toBe(200);
    expect(stored.body.output).toEqual(created.body.output);

    // As Codex sends the next turn: the call replayed with its namespace, then its output.
    const next = await request(app)
      .post('/v1/responses')
      .set(auth)
      .send({
        model: 'local:chat',
        store: false,
        tools: TOOLS,
        input: [
          { type: 'message', role: 'user', content: [{ type: 'input_text', text: `call wait_agent ${ARGS}` }] },
          {
            type: 'function_call',
            call_id: call.call_id,
            name: 'wait_agent',
            namespace: 'multi_agent_v1',
            arguments: ARGS,
          },
          { type: 'function_call_output', call_id: call.call_id, output: '{"status":{}}' },
        ],
      });
    expect(next.status, JSON.stringify(next.body)).toBe(200);
    expect(next.body.output_text).toBe('Tool wait_agent returned: {"status":{}}');
  });

  it('JSON: a plain function tool call has no namespace key', async () => {
    const { app, key } = await createTestApp();
    const created = await request(app)
      .post('/v1/responses')
      .set({ authorization: `Bearer ${key}` })
      .send({ model: 'local:chat', input: 'call exec_command {"cmd":"ls"}', tools: TOOLS });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const call = created.body.output.find((item: { type: string }) => item.type === 'function_call');
    expect(call).toMatchObject({ name: 'exec_command' });
    expect(Object.keys(call)).not.toContain('namespace');
  });

  it('stream: output_item.added and .done and the completed response carry the namespace; every event matches the contract', async () => {
    const { app, key } = await createTestApp();
    const res = await request(app)
      .post('/v1/responses')
      .set({ authorization: `Bearer ${key}` })
      .send({ model: 'local:chat', input: `call wait_agent ${ARGS}`, tools: TOOLS, stream: true })
      .buffer(true)
      .parse((response, callback) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => callback(null, text));
      });
    expect(res.status).toBe(200);
    const events = sseJson(res.body as string).map((event) => event.data);
    for (const event of events) {
      assertMatchesSchema('ResponseStreamEvent', event);
    }
    const items = (type: string) =>
      events.filter((event) => event.type === type).map((event) => event.item as Record<string, unknown>);
    expect(items('response.output_item.added').filter((item) => item.type === 'function_call')).toEqual([
      expect.objectContaining({ name: 'wait_agent', namespace: 'multi_agent_v1', status: 'in_progress' }),
    ]);
    expect(items('response.output_item.done').filter((item) => item.type === 'function_call')).toEqual([
      expect.objectContaining({
        name: 'wait_agent',
        namespace: 'multi_agent_v1',
        arguments: ARGS,
        status: 'completed',
      }),
    ]);
    const completed = events.at(-1) as { type: string; response: { output: Array<Record<string, unknown>> } };
    expect(completed.type).toBe('response.completed');
    expect(completed.response.output.filter((item) => item.type === 'function_call')).toEqual([
      expect.objectContaining({ name: 'wait_agent', namespace: 'multi_agent_v1', arguments: ARGS }),
    ]);
  });
});
