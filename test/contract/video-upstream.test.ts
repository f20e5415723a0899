/**
 * Video tasks on an OpenAI-compatible upstream (the one fake upstream, on loopback), through the HTTP contract
 * and the task queue: the upstream's MP4 is re-served under our ids and content URL (its job id never reaches
 * the caller), a transient failure (503 on create) is retried by the queue with backoff, and an upstream that
 * fails the job for good fails the task with the upstream's code.
 */
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProviderConfig } from '../../server/config.js';
import { sendBytes, sendJson } from '../fakes/answers.js';
import { byPath, startFakeUpstream, type FakeUpstream } from '../fakes/fake-upstream.js';
import { sampleVideo } from '../fakes/media-samples.js';
import { createTestApp, type TestApp } from '../helpers/create-test-app.js';
import { finishedVideo } from '../helpers/finished-video.js';
import { mp4Summary } from '../helpers/mp4-boxes.js';

let upstream: FakeUpstream;
let made: TestApp;
let mp4: Uint8Array;

beforeAll(async () => {
  mp4 = await sampleVideo(2, 64, 48);
  upstream = await startFakeUpstream();
  const provider: ProviderConfig = {
    id: 'fake',
    type: 'openai-compatible',
    base_url: `${upstream.origin}/v1`,
    timeout_ms: 5000,
    max_connections: 4,
    headers: {},
    responses: 'translate',
  };
  made = await createTestApp({
    providers: [provider],
    models: [{ provider: 'fake', model: 'sora-2', type: 'video', aliases: ['movie'] }],
    videos: { pollMs: 100 },
  });
});

afterAll(async () => {
  await made.videoRunner.stop(0);
  await made.registry.close();
  await upstream.close();
});

const auth = () => ({ authorization: `Bearer ${made.key}` });

const finished = (id: string) => finishedVideo(made.app, made.key, id, { polls: 200 });

describe('upstream video tasks', () => {
  it('retries a transient create failure, then re-serves the upstream MP4 under our own id', async () => {
    let creates = 0;
    upstream.handle(
      byPath({
        '/v1/videos': (_request, res) => {
          creates += 1;
          if (creates === 1) {
            sendJson(res, 503, JSON.stringify({ error: { message: 'busy' } }));
            return;
          }
          sendJson(res, 200, JSON.stringify({ id: 'upjob_42', object: 'video', status: 'queued', progress: 0 }));
        },
        '/v1/videos/upjob_42': (_request, res) =>
          sendJson(
            res,
            200,
            JSON.stringify({ id: 'upjob_42', object: 'video', status: 'completed', progress: 100, seconds: '2' }),
          ),
        '/v1/videos/upjob_42/content': (request_, res) => {
          if (request_.url.includes('variant=thumbnail')) {
            sendJson(res, 404, JSON.stringify({ error: { message: 'none' } }));
            return;
          }
          void sendBytes(res, mp4, 'video/mp4');
        },
      }),
    );
    const created = await request(made.app)
      .post('/v1/videos')
      .set(auth())
      .send({ model: 'movie', prompt: 'a fox in the snow', seconds: '4', size: '720x1280' });
    expect(created.status).toBe(202);
    expect(created.body.model).toBe('fake:sora-2');
    const done = await finished(created.body.id);
    expect(done).toMatchObject({ status: 'completed', progress: 100 });
    expect(creates).toBe(2);
    expect(JSON.stringify(done)).not.toContain('upjob_42');
    const content = await request(made.app).get(`/v1/videos/${created.body.id}/content`).set(auth()).buffer(true);
    expect(content.status).toBe(200);
    expect(Buffer.compare(content.body as Buffer, Buffer.from(mp4))).toBe(0);
    expect(mp4Summary(new Uint8Array(content.body as Buffer)).video?.codec).toBe('avc1');
    const thumbnail = await request(made.app)
      .get(`/v1/videos/${created.body.id}/content?variant=thumbnail`)
      .set(auth());
    expect(thumbnail.status).toBe(404);
  });

  it('fails the task with the upstream’s code when the upstream fails the job, without retrying', async () => {
    let creates = 0;
    upstream.handle(
      byPath({
        '/v1/videos': (_request, res) => {
          creates += 1;
          sendJson(res, 200, JSON.stringify({ id: 'upjob_9', object: 'video', status: 'queued', progress: 0 }));
        },
        '/v1/videos/upjob_9': (_request, res) =>
          sendJson(
            res,
            200,
            JSON.stringify({
              id: 'upjob_9',
              object: 'video',
              status: 'failed',
              progress: 0,
              error: { code: 'content_policy_violation', message: 'not allowed' },
            }),
          ),
      }),
    );
    const created = await request(made.app)
      .post('/v1/videos')
      .set(auth())
      .send({ model: 'movie', prompt: 'x', seconds: '4', size: '720x1280' });
    const done = await finished(created.body.id);
    expect(done).toMatchObject({ status: 'failed', error: { code: 'content_policy_violation' } });
    expect((done.error as { message: string }).message).toMatch(/not allowed/);
    expect(creates).toBe(1);
    const content = await request(made.app).get(`/v1/videos/${created.body.id}/content`).set(auth());
    expect(content.status).toBe(409);
  });
});
