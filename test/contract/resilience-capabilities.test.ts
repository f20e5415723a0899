/**
 * The retry layer beyond chat, end to end: each capability that can have upstream deployments — web search,
 * music, video, images, speech, speech-to-text, embeddings, rerank, and a tool over the MCP endpoint — with a
 * model served by two deployments on fake loopback upstreams, `a` (preferred: its weight dwarfs b's) and `b`.
 * When `a` fails (5xx, a refused connection, a 429 whose Retry-After is too long to wait) the call succeeds on
 * `b`, and the answer's headers and the usage record (`GET /v1/usage`) name `b` and the attempts; when every
 * deployment fails the model's fallback serves, or the caller gets the error envelope of the last failure.
 */
import type { ServerResponse } from 'node:http';
import request from 'supertest';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sendBytes, sendJson, sseHead } from '../fakes/answers.js';
import { byPath, startFakeUpstream, type FakeHandler, type FakeUpstream } from '../fakes/fake-upstream.js';
import { sampleAudio, sampleVideo } from '../fakes/media-samples.js';
import { expectOpenAIError, expectRequestId, usageOf } from '../helpers/contract-assertions.js';
import type { TestApp } from '../helpers/create-test-app.js';
import { finishedVideo } from '../helpers/finished-video.js';
import { freePort } from '../helpers/free-port.js';
import { sseJson } from '../helpers/read-sse.js';
import { assertMatchesSchema } from '../helpers/spec-schemas.js';
import { gatewayFromYaml, jsonAnswer, resetConnection } from '../helpers/yaml-gateway.js';

let a: FakeUpstream;
let b: FakeUpstream;
let gateway: TestApp;
let deadPort: number;
let mp3: Uint8Array;
let wav: Uint8Array;
let mp4: Uint8Array;

/** Two deployments of `id` on a and b, a preferred; `extra` adds lines to the model (fallbacks, retries). */
function model(id: string, type: string, name: string, extra = '', first = 'a', second = 'b') {
  return `
  - id: ${id}
    type: ${type}
    deployments:
      - { provider: ${first}, model: ${name}-a, weight: 1000000 }
      - { provider: ${second}, model: ${name}-b, weight: 0.000001 }
    backoff_ms: 10
${extra}`;
}

function yaml() {
  const upstream = (origin: string) => `
    type: openai-compatible
    base_url: ${origin}/v1
    timeout_ms: 5000
    music: {}`;
  return `
providers:
  a:${upstream(a.origin)}
  b:${upstream(b.origin)}
  dead:${upstream(`http://127.0.0.1:${deadPort}`)}
  wavonly:${upstream(b.origin)}
    transcription: { accepted_formats: [wav] }
  sa: { type: searxng, base_url: '${a.origin}', timeout_ms: 5000 }
  sb: { type: searxng, base_url: '${b.origin}', timeout_ms: 5000 }
circuit_breaker: { failure_threshold: 1000, cooldown_ms: 1000 }
models:
${model('finder', 'search', 'web', '    retries: 1\n    fallbacks: [local:search]', 'sa', 'sb')}
${model('writer', 'chat', 'chat')}
${model('composer', 'music', 'song')}
${model('director', 'video', 'sora')}
${model('painter', 'image', 'image', '    fallbacks: [local:image]')}
${model('voice', 'speech', 'tts')}
${model('listener', 'transcription', 'whisper')}
${model('picky', 'transcription', 'whisper', '', 'a', 'wavonly')}
${model('embedder', 'embedding', 'embed', '    fallbacks: [local:embed]')}
${model('ranker', 'rerank', 'rerank', '', 'dead', 'b')}
`;
}

const post = (path: string, body: Record<string, unknown>) =>
  request(gateway.app).post(path).set('authorization', `Bearer ${gateway.key}`).send(body);

/** A response's bytes, whatever its type. */
const bytesOf = (test: request.Test) =>
  test.buffer(true).parse((response, done) => {
    const chunks: Buffer[] = [];
    response.on('data', (chunk: Buffer) => chunks.push(chunk));
    response.on('end', () => done(null, Buffer.concat(chunks)));
  });

/** The call's one usage record. */
async function usageRow(requestId: string): Promise<Record<string, unknown>> {
  const rows = await usageOf(gateway.app, gateway.key, requestId);
  expect(rows).toHaveLength(1);
  return rows[0]!;
}

/** The headers and the usage record agree on who served and after how many attempts. */
async function expectServedBy(res: request.Response, deployment: string, attempts: number) {
  expect(res.headers['x-omnigate-deployment']).toBe(deployment);
  expect(res.headers['x-omnigate-attempts']).toBe(String(attempts));
  expect(await usageRow(expectRequestId(res))).toMatchObject({ deployment, attempts });
}

/** The model name each upstream request carried (JSON bodies), in order. */
const modelsAsked = (upstream: FakeUpstream) => upstream.requests.map((r) => (r.body as { model?: string })?.model);

const SEARXNG_ANSWER = JSON.stringify({
  results: [
    {
      url: 'https://example.com/lighthouse',
      title: 'Lighthouses',
      content: 'The keeper lights the lamp.',
      engine: 'bing',
    },
  ],
});

const searxng: FakeHandler = (_request, res) => sendJson(res, 200, SEARXNG_ANSWER);

function embeddingsAnswer(_request: unknown, res: ServerResponse) {
  sendJson(
    res,
    200,
    JSON.stringify({
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding: [0.5, -0.25, 0.125] }],
      model: 'embed-b',
      usage: { prompt_tokens: 3, total_tokens: 3 },
    }),
  );
}

const fail500 = jsonAnswer(500, '{"error":{"message":"boom"}}');
const fail503 = jsonAnswer(503, '{"error":{"message":"overloaded"}}');

// One gateway for the file (its breakers never open here: the threshold is out of reach); each test scripts the
// fakes afresh and reads only its own requests.
beforeAll(async () => {
  [mp3, wav, mp4] = await Promise.all([sampleAudio('mp3', 1), sampleAudio('wav', 1, true), sampleVideo(1, 64, 48)]);
  deadPort = await freePort();
  a = await startFakeUpstream();
  b = await startFakeUpstream();
  gateway = await gatewayFromYaml(yaml(), {
    // Two queue runs at most: a failing task ends after one backoff (1 s).
    videos: { pollMs: 100, maxAttempts: 2 },
    defaultSearchModel: 'finder',
    transcription: { maxBytes: 1024 * 1024, maxSeconds: 30 },
  });
});

beforeEach(() => {
  for (const upstream of [a, b]) {
    upstream.requests.length = 0;
    upstream.handle((_request, res) => void res.writeHead(500).end());
  }
});

afterAll(async () => {
  await gateway?.videoRunner.stop(0);
  await gateway?.services.close();
  await a?.close();
  await b?.close();
});

describe('web search', () => {
  it('a 503 from the first SearXNG deployment: the second answers, and the answer names the provider that ran it', async () => {
    a.handle(fail503);
    b.handle(byPath({ '/search': searxng }));
    const res = await post('/v1/web/search', { query: 'lighthouse', model: 'finder' });
    expect(res.status).toBe(200);
    assertMatchesSchema('WebSearchResponse', res.body);
    expect(res.body.results.map((result: { url: string }) => result.url)).toEqual(['https://example.com/lighthouse']);
    expect(res.body.provider).toBe('sb');
    expect(a.requests).toHaveLength(1);
    expect(b.requests[0]!.url).toMatch(/^\/search\?q=lighthouse&/);
    await expectServedBy(res, 'sb:web-b', 2);
  });

  it('every deployment failing: the fallback (local:search) serves', async () => {
    a.handle(fail500);
    b.handle(fail500);
    const res = await post('/v1/web/search', { query: 'lighthouse', model: 'finder' });
    expect(res.status).toBe(200);
    expect(res.body.provider).toBe('local');
    // retries: 1 — a, then b, then the fallback.
    expect(a.requests.length + b.requests.length).toBe(2);
    await expectServedBy(res, 'local:search', 3);
  });
});

describe('search answers', () => {
  /** The search step's headers and record fields agree, and are apart from the writing model's. */
  async function expectSearchServedBy(res: request.Response, deployment: string, attempts: number) {
    expect(res.headers['x-omnigate-search-deployment']).toBe(deployment);
    expect(res.headers['x-omnigate-search-attempts']).toBe(String(attempts));
    expect(await usageRow(expectRequestId(res))).toMatchObject({
      search_deployment: deployment,
      search_attempts: attempts,
    });
  }

  const chatAnswer: FakeHandler = (_request, res) =>
    sendJson(
      res,
      200,
      JSON.stringify({
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 1,
        model: 'chat-b',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: 'The keeper lights the lamp [1].' },
            finish_reason: 'stop',
          },
        ],
        usage: { prompt_tokens: 20, completion_tokens: 8, total_tokens: 28 },
      }),
    );

  it('the search step on the default search model with deployments: the second serves, the answer cites it', async () => {
    a.handle(resetConnection);
    b.handle(byPath({ '/search': searxng }));
    const res = await post('/v1/search/answer', { query: 'lighthouse keeper lamp', model: 'local:chat' });
    expect(res.status).toBe(200);
    assertMatchesSchema('SearchAnswer', res.body);
    expect(res.body.citations.map((citation: { url: string }) => citation.url)).toEqual([
      'https://example.com/lighthouse',
    ]);
    expect(a.requests).toHaveLength(1);
    await expectSearchServedBy(res, 'sb:web-b', 2);
    // The built-in local:chat wrote the answer: no deployment of its own, so none said.
    expect(res.headers['x-omnigate-deployment']).toBeUndefined();
    expect(res.headers['x-omnigate-attempts']).toBeUndefined();
    expect(await usageRow(expectRequestId(res))).toMatchObject({
      model: 'local:chat',
      provider: 'local',
      deployment: null,
      attempts: null,
    });
  });

  it('both steps through deployments: the search and the writing model each fail over, each said apart', async () => {
    a.handle(fail500);
    b.handle(byPath({ '/search': searxng, '/v1/chat/completions': chatAnswer }));
    const res = await post('/v1/search/answer', { query: 'lighthouse keeper lamp', model: 'writer' });
    expect(res.status).toBe(200);
    assertMatchesSchema('SearchAnswer', res.body);
    expect(res.body.answer).toBe('The keeper lights the lamp [1].');
    // a failed once for the search and once for the answer; b served both.
    expect(a.requests.map((r) => r.url.split('?')[0])).toEqual(['/search', '/v1/chat/completions']);
    expect(modelsAsked(b).at(-1)).toBe('chat-b');
    await expectServedBy(res, 'b:chat-b', 2);
    await expectSearchServedBy(res, 'sb:web-b', 2);
    expect(await usageRow(expectRequestId(res))).toMatchObject({ model: 'writer', provider: 'b' });
  });

  it('a streamed answer: the headers of both steps are on the stream’s head', async () => {
    a.handle(fail503);
    b.handle(
      byPath({
        '/search': searxng,
        '/v1/chat/completions': (_request, res) => {
          sseHead(res);
          const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
            `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'chat-b', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
          res.write(chunk({ role: 'assistant', content: 'Lamps [1].' }));
          res.end(`${chunk({}, 'stop')}data: [DONE]\n\n`);
        },
      }),
    );
    const res = await bytesOf(post('/v1/search/answer', { query: 'lighthouse', model: 'writer', stream: true }));
    expect(res.status).toBe(200);
    const events = sseJson((res.body as Buffer).toString('utf8')).map((event) => event.data);
    expect(events.at(-1)).toMatchObject({ type: 'answer.done', answer: 'Lamps [1].' });
    await expectServedBy(res, 'b:chat-b', 2);
    await expectSearchServedBy(res, 'sb:web-b', 2);
  });
});

describe('music', () => {
  it('a 429 whose Retry-After is too long to wait: the second deployment composes it, bytes intact', async () => {
    a.handle(jsonAnswer(429, '{}', { 'retry-after': '3600' }));
    b.handle(byPath({ '/v1/music/generations': (_request, res) => sendBytes(res, mp3, 'audio/mpeg') }));
    const res = await post('/v1/music/generations', {
      model: 'composer',
      prompt: 'calm piano',
      response_format: 'b64_json',
    });
    expect(res.status).toBe(200);
    expect(Buffer.from(res.body.data[0].b64_json, 'base64').equals(Buffer.from(mp3))).toBe(true);
    expect(modelsAsked(b)).toEqual(['song-b']);
    await expectServedBy(res, 'b:song-b', 2);
  });

  it('every deployment failing, no fallback: the last failure in the OpenAI envelope, the attempts recorded', async () => {
    a.handle(fail500);
    b.handle(fail503);
    const res = await post('/v1/music/generations', {
      model: 'composer',
      prompt: 'calm piano',
      response_format: 'b64_json',
    });
    expect(res.status).toBe(502);
    expectOpenAIError(res.body, {
      message: /Upstream a failed \(500\)/,
      type: 'upstream_error',
      param: null,
      code: 'upstream_error',
    });
    // retries: 2 (the default with deployments) — a, b, then a again after the backoff.
    expect(a.requests).toHaveLength(2);
    expect(b.requests).toHaveLength(1);
    expect(res.headers['x-omnigate-attempts']).toBe('3');
    expect(await usageRow(expectRequestId(res))).toMatchObject({ deployment: 'a:song-a', attempts: 3, status: 502 });
  });
});

describe('video (the durable queue)', () => {
  it('a 503 on the first deployment’s create: the task is made on the second, and the record names it', async () => {
    a.handle(fail503);
    b.handle(
      byPath({
        '/v1/videos': (_request, res) =>
          sendJson(res, 200, JSON.stringify({ id: 'job_b', object: 'video', status: 'queued', progress: 0 })),
        '/v1/videos/job_b': (_request, res) =>
          sendJson(
            res,
            200,
            JSON.stringify({ id: 'job_b', object: 'video', status: 'completed', progress: 100, seconds: '1' }),
          ),
        '/v1/videos/job_b/content': (recorded, res) =>
          recorded.url.includes('variant=thumbnail')
            ? sendJson(res, 404, JSON.stringify({ error: { message: 'none' } }))
            : void sendBytes(res, mp4, 'video/mp4'),
      }),
    );
    const created = await post('/v1/videos', { model: 'director', prompt: 'a fox', seconds: '4', size: '720x1280' });
    expect(created.status).toBe(202);
    const done = await finishedVideo(gateway.app, gateway.key, created.body.id, { polls: 200 });
    expect(done).toMatchObject({ status: 'completed' });
    // The create is a multipart form: each deployment was asked for its own model name.
    expect(a.requests).toHaveLength(1);
    expect(a.requests[0]!.text).toContain('sora-a');
    expect(b.requests[0]!.text).toContain('sora-b');
    const content = await bytesOf(
      request(gateway.app).get(`/v1/videos/${created.body.id}/content`).set('authorization', `Bearer ${gateway.key}`),
    );
    expect(Buffer.compare(content.body as Buffer, Buffer.from(mp4))).toBe(0);
    // The create call's record is amended when the video is made: by whom, after how many upstream attempts.
    expect(await usageRow(expectRequestId(created))).toMatchObject({
      deployment: 'b:sora-b',
      attempts: 2,
      provider: 'b',
    });
  });
});

describe('video across queue runs', () => {
  /** An upstream that makes video `job_<name>`, its create refused with a 503 the first `refusals` times. */
  function videoUpstream(name: string, refusals: number): FakeHandler {
    let creates = 0;
    return byPath({
      '/v1/videos': (recorded, res, req) => {
        creates += 1;
        if (creates <= refusals) {
          return fail503(recorded, res, req);
        }
        sendJson(res, 200, JSON.stringify({ id: `job_${name}`, object: 'video', status: 'queued', progress: 0 }));
      },
      [`/v1/videos/job_${name}`]: (_request, res) =>
        sendJson(
          res,
          200,
          JSON.stringify({ id: `job_${name}`, object: 'video', status: 'completed', progress: 100, seconds: '1' }),
        ),
      [`/v1/videos/job_${name}/content`]: (recorded, res) =>
        recorded.url.includes('variant=thumbnail')
          ? sendJson(res, 404, JSON.stringify({ error: { message: 'none' } }))
          : void sendBytes(res, mp4, 'video/mp4'),
    });
  }

  /** The record is amended just after the task row says how it ended: read until it holds `attempts` (bounded). */
  async function amendedRow(requestId: string, attempts: number) {
    let row: Record<string, unknown> = {};
    for (let poll = 0; poll < 50 && row.attempts !== attempts; poll += 1) {
      row = await usageRow(requestId);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return row;
  }

  const createVideo = () =>
    post('/v1/videos', { model: 'director', prompt: 'a fox', seconds: '4', size: '720x1280' }).expect(202);

  it('a first queue run failing on every deployment, the second run served: the record sums both runs’ attempts', async () => {
    // Run 1: a, b, a (retries: 2) all refuse and the task goes back to the queue; run 2: a makes it.
    a.handle(videoUpstream('a', 2));
    b.handle(fail503);
    const created = await createVideo();
    const done = await finishedVideo(gateway.app, gateway.key, created.body.id, { polls: 200 });
    expect(done).toMatchObject({ status: 'completed' });
    expect(a.requests.filter((r) => r.method === 'POST')).toHaveLength(3);
    expect(b.requests).toHaveLength(1);
    expect(await amendedRow(expectRequestId(created), 4)).toMatchObject({
      deployment: 'a:sora-a',
      attempts: 4,
      provider: 'a',
    });
  });

  it('a task that fails in every queue run: its record is amended with every upstream attempt all the same', async () => {
    a.handle(fail500);
    b.handle(fail503);
    const created = await createVideo();
    const done = await finishedVideo(gateway.app, gateway.key, created.body.id, { polls: 200 });
    expect(done).toMatchObject({ status: 'failed' });
    // Two queue runs of three upstream attempts each (a, b, a).
    expect(a.requests).toHaveLength(4);
    expect(b.requests).toHaveLength(2);
    expect(await amendedRow(expectRequestId(created), 6)).toMatchObject({
      deployment: 'a:sora-a',
      attempts: 6,
      provider: 'a',
      status: 202,
    });
  });
});

describe('images and speech', () => {
  it('every image deployment answering 503: the fallback (local:image) draws it', async () => {
    a.handle(fail503);
    b.handle(fail503);
    const res = await post('/v1/images/generations', {
      model: 'painter',
      prompt: 'a lighthouse',
      size: '256x256',
      response_format: 'b64_json',
    });
    expect(res.status).toBe(200);
    expect(Buffer.from(res.body.data[0].b64_json, 'base64').subarray(1, 4).toString()).toBe('PNG');
    expect(a.requests.length + b.requests.length).toBe(3);
    await expectServedBy(res, 'local:image', 4);
  });

  it('an image deployment refusing the prompt (400) is not retried: one attempt, the upstream’s reason', async () => {
    a.handle(jsonAnswer(400, '{"error":{"message":"prompt: too long"}}'));
    const res = await post('/v1/images/generations', { model: 'painter', prompt: 'a lighthouse' });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('prompt: too long');
    expect(b.requests).toHaveLength(0);
    expect(res.headers['x-omnigate-attempts']).toBe('1');
  });

  it('every speech deployment failing, no fallback: the OpenAI envelope of the last failure', async () => {
    a.handle(resetConnection);
    b.handle(fail500);
    const res = await post('/v1/audio/speech', { model: 'voice', input: 'hello', voice: 'alloy' });
    expect(res.status).toBe(502);
    expect(res.body.error).toMatchObject({ type: 'upstream_error', code: 'upstream_error' });
    expect(a.requests).toHaveLength(2);
    expect(b.requests).toHaveLength(1);
    expect(await usageRow(expectRequestId(res))).toMatchObject({ deployment: 'a:tts-a', attempts: 3, status: 502 });
  });

  it('speech: a 500 from the first deployment, the second’s audio byte for byte', async () => {
    a.handle(fail500);
    b.handle(byPath({ '/v1/audio/speech': (_request, res) => sendBytes(res, mp3, 'audio/mpeg') }));
    const res = await bytesOf(
      request(gateway.app)
        .post('/v1/audio/speech')
        .set('authorization', `Bearer ${gateway.key}`)
        .send({ model: 'voice', input: 'hello', voice: 'alloy' }),
    );
    expect(res.status).toBe(200);
    expect(Buffer.compare(res.body as Buffer, Buffer.from(mp3))).toBe(0);
    await expectServedBy(res, 'b:tts-b', 2);
  });
});

describe('speech-to-text', () => {
  const transcribe = () =>
    request(gateway.app)
      .post('/v1/audio/transcriptions')
      .set('authorization', `Bearer ${gateway.key}`)
      .field('model', 'listener')
      .attach('file', Buffer.from(wav), 'note.wav');

  it('a 503 from the first deployment: the second transcribes, and was sent the same audio', async () => {
    a.handle(fail503);
    b.handle(
      byPath({
        '/v1/audio/transcriptions': (_request, res) =>
          sendJson(res, 200, JSON.stringify({ text: 'Hello there.', usage: { type: 'duration', seconds: 1 } })),
      }),
    );
    const res = await transcribe();
    expect(res.status).toBe(200);
    expect(res.body.text).toBe('Hello there.');
    expect(a.requests).toHaveLength(1);
    expect(b.requests[0]!.raw.includes(Buffer.from(wav))).toBe(true);
    expect(b.requests[0]!.text).toContain('whisper-b');
    await expectServedBy(res, 'b:whisper-b', 2);
  });

  it('audio is converted into a container every deployment takes: the WAV-only second gets WAV for an MP3', async () => {
    a.handle(fail503);
    b.handle(
      byPath({
        '/v1/audio/transcriptions': (_request, res) =>
          sendJson(res, 200, JSON.stringify({ text: 'Hello there.', usage: { type: 'duration', seconds: 1 } })),
      }),
    );
    const res = await request(gateway.app)
      .post('/v1/audio/transcriptions')
      .set('authorization', `Bearer ${gateway.key}`)
      .field('model', 'picky')
      .attach('file', Buffer.from(mp3), 'note.mp3');
    expect(res.status).toBe(200);
    expect(res.body.text).toBe('Hello there.');
    for (const received of [a.requests[0]!, b.requests[0]!]) {
      expect(received.raw.includes(Buffer.from('RIFF'))).toBe(true);
      expect(received.text).toContain('filename="note.wav"');
    }
    await expectServedBy(res, 'wavonly:whisper-b', 2);
  });

  it('a translation: a 500 from the first deployment, the second translates', async () => {
    a.handle(fail500);
    b.handle(
      byPath({
        '/v1/audio/translations': (_request, res) =>
          sendJson(res, 200, JSON.stringify({ text: 'Hello and welcome.', usage: { type: 'duration', seconds: 1 } })),
      }),
    );
    const res = await request(gateway.app)
      .post('/v1/audio/translations')
      .set('authorization', `Bearer ${gateway.key}`)
      .field('model', 'listener')
      .attach('file', Buffer.from(wav), 'note.wav');
    expect(res.status).toBe(200);
    expect(res.body.text).toBe('Hello and welcome.');
    expect(b.requests[0]!.url).toBe('/v1/audio/translations');
    await expectServedBy(res, 'b:whisper-b', 2);
  });

  it('a stream: a reset connection on the first deployment, the second’s events from the first one', async () => {
    a.handle(resetConnection);
    b.handle(
      byPath({
        '/v1/audio/transcriptions': (_request, res) => {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          for (const delta of ['Hello', ' there.']) {
            res.write(`data: ${JSON.stringify({ type: 'transcript.text.delta', delta })}\n\n`);
          }
          res.end(`data: ${JSON.stringify({ type: 'transcript.text.done', text: 'Hello there.' })}\n\n`);
        },
      }),
    );
    const res = await bytesOf(transcribe().field('stream', 'true'));
    expect(res.status).toBe(200);
    const events = sseJson((res.body as Buffer).toString('utf8')).map((event) => event.data);
    expect(events.filter((event) => event.type === 'transcript.text.delta').map((event) => event.delta)).toEqual([
      'Hello',
      ' there.',
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'transcript.text.done', text: 'Hello there.' });
    expect(a.requests).toHaveLength(1);
    await expectServedBy(res, 'b:whisper-b', 2);
  });

  it('every deployment failing: the OpenAI envelope of the last failure, the attempts recorded', async () => {
    a.handle(fail500);
    b.handle(fail500);
    const res = await transcribe();
    expect(res.status).toBe(502);
    expect(res.body.error).toMatchObject({ type: 'upstream_error', code: 'upstream_error' });
    expect(a.requests.length + b.requests.length).toBe(3);
    expect(await usageRow(expectRequestId(res))).toMatchObject({ deployment: 'a:whisper-a', attempts: 3, status: 502 });
  });
});

describe('embeddings and rerank', () => {
  it('embeddings: a 500 from the first deployment, the second’s vectors', async () => {
    a.handle(fail500);
    b.handle(byPath({ '/v1/embeddings': embeddingsAnswer }));
    const res = await post('/v1/embeddings', { model: 'embedder', input: 'hello', encoding_format: 'float' });
    expect(res.status).toBe(200);
    expect(res.body.data[0].embedding).toEqual([0.5, -0.25, 0.125]);
    expect(res.body.model).toBe('embedder');
    expect(modelsAsked(b)).toEqual(['embed-b']);
    await expectServedBy(res, 'b:embed-b', 2);
    expect(await usageRow(expectRequestId(res))).toMatchObject({ input_tokens: 3, provider: 'b' });
  });

  it('embeddings: every deployment failing, the fallback (local:embed) embeds', async () => {
    a.handle(fail503);
    b.handle(resetConnection);
    const res = await post('/v1/embeddings', { model: 'embedder', input: 'hello', encoding_format: 'float' });
    expect(res.status).toBe(200);
    expect(res.body.data[0].embedding).toHaveLength(256);
    await expectServedBy(res, 'local:embed', 4);
  });

  it('rerank: the first deployment refuses the connection, the second ranks', async () => {
    b.handle(
      byPath({
        '/v1/rerank': (_request, res) =>
          sendJson(
            res,
            200,
            JSON.stringify({
              results: [
                { index: 1, relevance_score: 0.9 },
                { index: 0, relevance_score: 0.2 },
              ],
              usage: { total_tokens: 11 },
            }),
          ),
      }),
    );
    const res = await post('/v1/rerank', { model: 'ranker', query: 'lighthouse', documents: ['ships', 'lamps'] });
    expect(res.status).toBe(200);
    expect(res.body.results.map((result: { index: number }) => result.index)).toEqual([1, 0]);
    expect(modelsAsked(b)).toEqual(['rerank-b']);
    await expectServedBy(res, 'b:rerank-b', 2);
  });

  it('rerank: every deployment failing, the error envelope of the last failure', async () => {
    b.handle(fail500);
    const res = await post('/v1/rerank', { model: 'ranker', query: 'lighthouse', documents: ['ships', 'lamps'] });
    expect(res.status).toBe(502);
    expect(res.body.error).toMatchObject({ type: 'upstream_error', code: 'upstream_error' });
    expect(b.requests).toHaveLength(1);
    expect(await usageRow(expectRequestId(res))).toMatchObject({ deployment: 'dead:rerank-a', attempts: 3 });
  });
});

describe('a tool over the MCP endpoint', () => {
  /** One tools/call (as test/helpers/mcp-tool-call.ts makes it), answered as an SSE stream: the response itself, for its request id. */
  async function mcpCall(name: string, args: Record<string, unknown>) {
    const res = await request(gateway.app)
      .post('/v1/mcp')
      .set('authorization', `Bearer ${gateway.key}`)
      .set('accept', 'application/json, text/event-stream')
      .set('mcp-protocol-version', '2025-11-25')
      .send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
    expect(res.status).toBe(200);
    return res;
  }

  it('web_search on a model with deployments: served by the second, and the MCP request’s record says so', async () => {
    a.handle(fail500);
    b.handle(byPath({ '/search': searxng }));
    const res = await mcpCall('web_search', { query: 'lighthouse', model: 'finder' });
    const result = JSON.parse(/^data: (.+)$/m.exec(res.text)![1]!).result;
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent.results[0].url).toBe('https://example.com/lighthouse');
    expect(a.requests).toHaveLength(1);
    expect(await usageRow(expectRequestId(res))).toMatchObject({
      operation: 'mcpPost:web_search',
      provider: 'sb',
    });
    // The stream's head waited for the result, so it carries the tool call's headers; the record agrees.
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    await expectServedBy(res, 'sb:web-b', 2);
  });

  it('search_answer over MCP: both steps’ headers on the stream, apart, as on the REST route', async () => {
    a.handle(fail500);
    b.handle(
      byPath({
        '/search': searxng,
        '/v1/chat/completions': (_request, res) =>
          sendJson(
            res,
            200,
            JSON.stringify({
              id: 'chatcmpl-2',
              object: 'chat.completion',
              created: 1,
              model: 'chat-b',
              choices: [{ index: 0, message: { role: 'assistant', content: 'Lamps [1].' }, finish_reason: 'stop' }],
              usage: { prompt_tokens: 20, completion_tokens: 3, total_tokens: 23 },
            }),
          ),
      }),
    );
    const res = await mcpCall('search_answer', { query: 'lighthouse', model: 'writer' });
    const result = JSON.parse(/^data: (.+)$/m.exec(res.text)![1]!).result;
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent.answer).toBe('Lamps [1].');
    await expectServedBy(res, 'b:chat-b', 2);
    expect(res.headers['x-omnigate-search-deployment']).toBe('sb:web-b');
    expect(res.headers['x-omnigate-search-attempts']).toBe('2');
    expect(await usageRow(expectRequestId(res))).toMatchObject({
      operation: 'mcpPost:search_answer',
      search_deployment: 'sb:web-b',
      search_attempts: 2,
    });
  });

  it('generate_music with every deployment failing: an error result, and the record holds the attempts', async () => {
    a.handle(fail503);
    b.handle(fail503);
    const res = await mcpCall('generate_music', { prompt: 'calm piano', model: 'composer', duration: 1 });
    const result = JSON.parse(/^data: (.+)$/m.exec(res.text)![1]!).result;
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toContain('Upstream a failed (503)');
    expect(a.requests.length + b.requests.length).toBe(3);
    expect(await usageRow(expectRequestId(res))).toMatchObject({ operation: 'mcpPost:generate_music' });
    // An error result is still a 200 whose head names the deployment tried last and the attempts.
    await expectServedBy(res, 'a:song-a', 3);
  });
});
