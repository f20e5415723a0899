/**
 * The retry layer (server/providers/resilience/) against two fake upstreams on loopback, `a` (preferred:
 * its weight dwarfs b's) and `b`, that misbehave on purpose. For each failure: whether it is retried, who
 * serves, the attempts, what the caller gets (byte-exact where the healthy upstream answered), the headers and
 * the usage record. No assertion compares wall-clock time with a limit: bounded time is shown by the attempts
 * made and by the test ending (each stall is cut by a configured timeout, never by the test).
 */
import request from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sendBytes, sendJson, sseHead, writeInPieces } from '../fakes/answers.js';
import { sampleAudio, sampleImage } from '../fakes/media-samples.js';
import { startFakeUpstream, type FakeHandler, type FakeUpstream } from '../fakes/fake-upstream.js';
import { openAIFixture as fixture } from '../fakes/fixtures.js';
import { expectRequestId } from '../helpers/contract-assertions.js';
import type { TestApp } from '../helpers/create-test-app.js';
import { gatewayFromYaml, jsonAnswer, resetConnection } from '../helpers/yaml-gateway.js';
import { readSse } from '../helpers/read-sse.js';

let a: FakeUpstream;
let b: FakeUpstream;
let gateway: TestApp;

const IDLE_MS = 300;
const FIRST_BYTE_MS = 300;

function yaml(extra = '', breaker = { failure_threshold: 5, cooldown_ms: 30_000 }) {
  return `
providers:
  a:
    type: openai-compatible
    base_url: ${a.origin}/v1
    timeout_ms: 5000
    first_byte_timeout_ms: ${FIRST_BYTE_MS}
    idle_timeout_ms: ${IDLE_MS}
  b:
    type: openai-compatible
    base_url: ${b.origin}/v1
    timeout_ms: 5000
circuit_breaker: { failure_threshold: ${breaker.failure_threshold}, cooldown_ms: ${breaker.cooldown_ms} }
models:
  - id: smart
    deployments:
      - { provider: a, model: model-a, weight: 1000000 }
      - { provider: b, model: model-b, weight: 0.000001 }
    retries: 2
    backoff_ms: 10
    max_backoff_ms: 2000
${extra}`;
}

async function start(text: string) {
  gateway = await gatewayFromYaml(text);
}

const json = jsonAnswer;

const healthyJson = json(200, fixture('text.json'));
const healthyStream: FakeHandler = async (_request, res) => {
  sseHead(res);
  await writeInPieces(res, fixture('text.sse'), 64);
  res.end();
};

/**
 * Headers, then the first events (the role, then "The": the first that makes a part), then nothing more: the
 * idle timeout has to end it.
 */
const hangAfterFirstEvent: FakeHandler = (_request, res) => {
  sseHead(res);
  res.write(`${fixture('text.sse').split('\n\n').slice(0, 2).join('\n\n')}\n\n`);
};

function chat(body: Record<string, unknown> = {}) {
  return request(gateway.app)
    .post('/v1/chat/completions')
    .set('authorization', `Bearer ${gateway.key}`)
    .send({ model: 'smart', messages: [{ role: 'user', content: 'Capital of France?' }], ...body });
}

function messages(body: Record<string, unknown> = {}) {
  return request(gateway.app)
    .post('/anthropic/v1/messages')
    .set('authorization', `Bearer ${gateway.key}`)
    .send({ model: 'smart', max_tokens: 64, messages: [{ role: 'user', content: 'Capital of France?' }], ...body });
}

interface UsageRow {
  deployment: string | null;
  attempts: number | null;
  status: number;
  output_tokens: number;
  model: string | null;
}

/** The call's usage record as `GET /v1/usage` lists it (written in batches, so polled). */
async function usageRow(requestId: string): Promise<UsageRow> {
  for (let tries = 0; tries < 300; tries += 1) {
    const res = await request(gateway.app)
      .get('/v1/usage')
      .query({ request_id: requestId })
      .set('authorization', `Bearer ${gateway.key}`);
    expect(res.status).toBe(200);
    const [row] = (res.body as { data: UsageRow[] }).data;
    if (row) {
      return row;
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`no usage record for ${requestId}`);
}

function failedAttemptLogs(requestId: string) {
  return gateway.logs.filter((line) => line.msg === 'upstream attempt failed' && line.requestId === requestId);
}

beforeEach(async () => {
  a = await startFakeUpstream();
  b = await startFakeUpstream(healthyJson);
});

afterEach(async () => {
  await gateway?.services.close();
  await a.close();
  await b.close();
});

describe('failures before the first byte are retried on the next deployment', () => {
  const cases: Array<[string, FakeHandler, string]> = [
    ['a 500', json(500, '{"error":{"message":"boom"}}'), 'status_5xx'],
    ['a 503', json(503, '{"error":{"message":"overloaded"}}'), 'status_5xx'],
    ['a reset connection', resetConnection, 'unreachable'],
    ['a hang before headers', () => undefined, 'timeout'],
    [
      'a 429 whose Retry-After is longer than max_backoff_ms',
      json(429, '{}', { 'retry-after': '3600' }),
      'rate_limited',
    ],
  ];
  for (const [name, handler, cause] of cases) {
    it(`${name}: b serves, byte for byte, after 2 attempts, and the record and headers say so`, async () => {
      await start(yaml());
      a.handle(handler);
      const res = await chat();
      expect(res.status).toBe(200);
      expect(res.text).toBe(fixture('text.json'));
      expect(res.headers['x-omnigate-deployment']).toBe('b:model-b');
      expect(res.headers['x-omnigate-attempts']).toBe('2');
      expect(a.requests).toHaveLength(1);
      expect(b.requests).toHaveLength(1);
      expect((b.requests[0]!.body as { model: string }).model).toBe('model-b');
      const id = expectRequestId(res);
      expect(await usageRow(id)).toMatchObject({ deployment: 'b:model-b', attempts: 2, status: 200, model: 'smart' });
      const logs = failedAttemptLogs(id);
      expect(logs).toHaveLength(1);
      expect(logs[0]).toMatchObject({ level: 40, deployment: 'a:model-a', cause });
    });
  }

  it('a translated call (Anthropic dialect over OpenAI upstreams) whose first answer is not JSON is retried', async () => {
    await start(yaml());
    a.handle(json(200, '{"id": "chatcmpl-1", "choices": [tru'));
    const res = await messages();
    expect(res.status).toBe(200);
    expect(res.body.content[0].text).toContain('Paris');
    expect(res.headers['x-omnigate-deployment']).toBe('b:model-b');
    expect(res.headers['x-omnigate-attempts']).toBe('2');
    expect(failedAttemptLogs(expectRequestId(res, 'anthropic'))[0]).toMatchObject({ cause: 'invalid_response' });
  });

  it('a Responses call (translated for OpenAI-compatible upstreams) is retried on b after a 500', async () => {
    await start(yaml());
    a.handle(json(500, '{}'));
    const res = await request(gateway.app)
      .post('/v1/responses')
      .set('authorization', `Bearer ${gateway.key}`)
      .send({ model: 'smart', input: 'Capital of France?' });
    expect(res.status).toBe(200);
    expect(JSON.stringify(res.body.output)).toContain('Paris');
    expect(res.headers['x-omnigate-deployment']).toBe('b:model-b');
    expect(res.headers['x-omnigate-attempts']).toBe('2');
  });

  it('a translated stream whose upstream hangs before headers is served by b from its first event', async () => {
    await start(yaml());
    a.handle(() => undefined);
    b.handle(healthyStream);
    const res = await messages({ stream: true });
    expect(res.status).toBe(200);
    const events = readSse(res.text).map((event) => event.event);
    expect(events[0]).toBe('message_start');
    expect(events.at(-1)).toBe('message_stop');
    expect(res.headers['x-omnigate-attempts']).toBe('2');
    expect(a.requests).toHaveLength(1);
  });

  it('a passthrough stream is relayed byte for byte from b after a 503 from a', async () => {
    await start(yaml());
    a.handle(json(503, '{}'));
    b.handle(healthyStream);
    const res = await chat({ stream: true, stream_options: { include_usage: true } });
    expect(res.status).toBe(200);
    expect(res.text).toBe(fixture('text.sse'));
    expect(res.headers['x-omnigate-deployment']).toBe('b:model-b');
  });
});

describe('what is not retried', () => {
  it('a 400 goes to the caller at once: one attempt, b never called', async () => {
    await start(yaml());
    a.handle(json(400, '{"error":{"message":"temperature: out of range"}}'));
    const res = await chat();
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('temperature: out of range');
    expect(res.headers['x-omnigate-attempts']).toBe('1');
    expect(b.requests).toHaveLength(0);
    expect(await usageRow(expectRequestId(res))).toMatchObject({ deployment: 'a:model-a', attempts: 1, status: 400 });
  });

  it('a hang after the first event becomes the dialect error event within the idle timeout, with a usage record', async () => {
    await start(yaml());
    a.handle(hangAfterFirstEvent);
    const res = await messages({ stream: true });
    expect(res.status).toBe(200);
    const events = readSse(res.text);
    expect(events[0]!.event).toBe('message_start');
    expect(events.at(-1)!.event).toBe('error');
    expect(events.at(-1)!.data).toContain(`sent nothing for ${IDLE_MS} ms`);
    expect(b.requests).toHaveLength(0);
    const row = await usageRow(expectRequestId(res, 'anthropic'));
    expect(row).toMatchObject({ deployment: 'a:model-a', attempts: 1, status: 504 });
  });

  it('a trickle slower than the idle timeout (passthrough) ends in an error frame, not a retry', async () => {
    await start(yaml());
    a.handle(async (_request, res) => {
      sseHead(res);
      for (const event of fixture('text.sse').split('\n\n').slice(0, 3)) {
        res.write(`${event}\n\n`);
        // Well past the idle timeout: undici's timers tick about once a second, so a shorter gap may slip through.
        await new Promise((resolve) => setTimeout(resolve, IDLE_MS + 2_500));
        if (res.destroyed) {
          return;
        }
      }
      res.end();
    });
    const res = await chat({ stream: true });
    expect(res.status).toBe(200);
    expect(res.text.startsWith(fixture('text.sse').split('\n\n')[0]!)).toBe(true);
    expect(res.text).toContain('"error"');
    expect(res.text).not.toContain('[DONE]');
    expect(b.requests).toHaveLength(0);
    expect(await usageRow(expectRequestId(res))).toMatchObject({ deployment: 'a:model-a', attempts: 1, status: 504 });
  });
});

describe('Retry-After and fallbacks', () => {
  it('a 429 with a short Retry-After on the only deployment is waited for, then the same deployment answers', async () => {
    await start(`${yaml()}
  - id: single
    provider: a
    model: model-a
    retries: 1
    max_backoff_ms: 5000
`);
    let calls = 0;
    a.handle((request, res) => {
      calls += 1;
      (calls === 1 ? json(429, '{}', { 'retry-after': '1' }) : healthyJson)(request, res, undefined as never);
    });
    const began = Date.now();
    const res = await chat({ model: 'single' });
    expect(res.status).toBe(200);
    expect(res.text).toBe(fixture('text.json'));
    expect(res.headers['x-omnigate-attempts']).toBe('2');
    // A lower bound only: the second attempt waited the upstream's second.
    expect(Date.now() - began).toBeGreaterThanOrEqual(950);
  });

  it('fallbacks are tried in order when every deployment failed; a context-window refusal goes to its own fallback', async () => {
    await start(`${yaml()}
  - id: primary
    provider: a
    model: model-a
    fallbacks: [b:model-fallback]
    context_window_fallbacks: [b:model-long]
`);
    a.handle(json(500, '{}'));
    let res = await chat({ model: 'primary' });
    expect(res.status).toBe(200);
    expect(res.headers['x-omnigate-deployment']).toBe('b:model-fallback');
    expect(res.headers['x-omnigate-attempts']).toBe('2');

    a.handle(json(400, '{"error":{"message":"This model\'s maximum context length is 8192 tokens."}}'));
    res = await chat({ model: 'primary' });
    expect(res.status).toBe(200);
    expect(res.headers['x-omnigate-deployment']).toBe('b:model-long');
    expect((b.requests.at(-1)!.body as { model: string }).model).toBe('model-long');
  });
});

describe('the circuit breaker', () => {
  it('after the threshold a failing deployment gets no calls until the cooldown ends, then exactly one probe', async () => {
    const cooldown = 400;
    await start(
      `${yaml('', { failure_threshold: 2, cooldown_ms: cooldown })}
  - id: guarded
    provider: a
    model: model-a
    retries: 0
    fallbacks: [b:model-b]
`,
    );
    // a fails slowly enough that concurrent calls overlap the probe.
    a.handle(async (request, res) => {
      await new Promise((resolve) => setTimeout(resolve, 100));
      json(500, '{}')(request, res, undefined as never);
    });
    for (let call = 0; call < 2; call += 1) {
      expect((await chat({ model: 'guarded' })).headers['x-omnigate-attempts']).toBe('2');
    }
    expect(a.requests).toHaveLength(2);
    // Open: a is skipped, b answers at the first attempt.
    for (let call = 0; call < 3; call += 1) {
      const res = await chat({ model: 'guarded' });
      expect(res.headers['x-omnigate-deployment']).toBe('b:model-b');
      expect(res.headers['x-omnigate-attempts']).toBe('1');
    }
    expect(a.requests).toHaveLength(2);
    const ready = await request(gateway.app).get('/health/ready');
    expect(ready.body.deployments).toContainEqual({
      model: 'smart',
      deployment: 'a:model-a',
      state: 'open',
      failures: 2,
    });

    await new Promise((resolve) => setTimeout(resolve, cooldown + 50));
    // Half-open: of five calls at once, one probes a (and fails), the others go straight to b.
    const results = await Promise.all(Array.from({ length: 5 }, () => chat({ model: 'guarded' })));
    expect(results.every((res) => res.status === 200)).toBe(true);
    expect(a.requests).toHaveLength(3);
    expect(results.filter((res) => res.headers['x-omnigate-attempts'] === '2')).toHaveLength(1);

    // The failed probe opened it again; after the next cooldown a healthy a takes the probe and closes it.
    a.handle(healthyJson);
    await new Promise((resolve) => setTimeout(resolve, cooldown + 50));
    const probe = await chat({ model: 'guarded' });
    expect(probe.headers['x-omnigate-deployment']).toBe('a:model-a');
    const after = await chat({ model: 'guarded' });
    expect(after.headers['x-omnigate-deployment']).toBe('a:model-a');
    expect(a.requests).toHaveLength(5);
  });
});

describe('other capabilities go through the same layer', () => {
  const media = `
  - id: painter
    type: image
    deployments:
      - { provider: a, model: image-a, weight: 1000000 }
      - { provider: b, model: image-b, weight: 0.000001 }
  - id: voice
    type: speech
    deployments:
      - { provider: a, model: tts-a, weight: 1000000 }
      - { provider: b, model: tts-b, weight: 0.000001 }
`;

  it('an image call whose first deployment answers 503 is served by the second, bytes intact', async () => {
    await start(yaml(media));
    const picture = await sampleImage('png', 32, 24);
    a.handle(json(503, '{}'));
    b.handle((_request, res) =>
      sendJson(res, 200, JSON.stringify({ created: 1, data: [{ b64_json: Buffer.from(picture).toString('base64') }] })),
    );
    const res = await request(gateway.app)
      .post('/v1/images/generations')
      .set('authorization', `Bearer ${gateway.key}`)
      .send({ model: 'painter', prompt: 'a cat', response_format: 'b64_json' });
    expect(res.status).toBe(200);
    expect(Buffer.from(res.body.data[0].b64_json, 'base64').equals(Buffer.from(picture))).toBe(true);
    expect(res.headers['x-omnigate-deployment']).toBe('b:image-b');
    expect(res.headers['x-omnigate-attempts']).toBe('2');
    expect((b.requests[0]!.body as { model: string }).model).toBe('image-b');
    expect(await usageRow(expectRequestId(res))).toMatchObject({ deployment: 'b:image-b', attempts: 2 });
  });

  it('a speech call whose first deployment resets the connection is served by the second', async () => {
    await start(yaml(media));
    const audio = await sampleAudio('mp3', 1);
    a.handle(resetConnection);
    b.handle((_request, res) => sendBytes(res, audio, 'audio/mpeg'));
    const res = await request(gateway.app)
      .post('/v1/audio/speech')
      .set('authorization', `Bearer ${gateway.key}`)
      .buffer(true)
      .parse((response, done) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => done(null, Buffer.concat(chunks)));
      })
      .send({ model: 'voice', input: 'hello', voice: 'alloy' });
    expect(res.status).toBe(200);
    expect(res.headers['x-omnigate-deployment']).toBe('b:tts-b');
    expect(res.headers['x-omnigate-attempts']).toBe('2');
    expect(a.requests).toHaveLength(1);
  });
});
