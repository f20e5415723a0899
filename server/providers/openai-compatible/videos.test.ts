import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sendBytes, sendJson } from '../../../test/fakes/answers.js';
import {
  byPath,
  startFakeUpstream,
  type FakeUpstream,
  type RecordedRequest,
} from '../../../test/fakes/fake-upstream.js';
import { sampleImage, sampleVideo } from '../../../test/fakes/media-samples.js';
import { ApiError, UpstreamError } from '../../core/api-error.js';
import type { VideoCallOptions, VideoModel, VideoTaskContext } from '../../core/models.js';
import type { OpenAICompatibleConfig } from './http-client.js';
import { createOpenAICompatibleProvider, type OpenAICompatibleProvider } from './index.js';
import type { VideoPolling } from './videos.js';

const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const JOB = 'video_up_7f3a';
const OPTIONS: VideoCallOptions = { prompt: 'Ein Papierboot im Regen ☔', seconds: 6, width: 1280, height: 720 };
/** Fast enough for tests, still a backoff: 5, 7.5, 11.25, 15 ms… */
const FAST: Partial<VideoPolling> = { initialMs: 5, maxMs: 15, pollRetries: 2 };

/** One poll's answer: a state of the upstream job, or an HTTP status it fails with. */
type PollStep =
  | { status: string; progress?: number; seconds?: string; error?: { code: string; message: string } | null }
  | number;

interface Script {
  /** Answers to successive polls; the last one repeats. */
  polls: PollStep[];
  create?: number;
  content?: Uint8Array | number;
  thumbnail?: Uint8Array | number;
}

let upstream: FakeUpstream;
const providers: OpenAICompatibleProvider[] = [];
let mp4: Uint8Array;
let png: Uint8Array;
let counts: { creates: number; polls: number };

function config(): OpenAICompatibleConfig {
  return {
    id: 'studio',
    type: 'openai-compatible',
    base_url: `${upstream.origin}/v1`,
    api_key: 'sk-test-video-key',
    timeout_ms: 2_000,
    max_connections: 4,
    headers: {},
    responses: 'translate',
  };
}

function videoObject(step: Exclude<PollStep, number>): string {
  return JSON.stringify({
    id: JOB,
    object: 'video',
    model: 'sora-2',
    created_at: 1763779200,
    size: '1280x720',
    error: null,
    ...step,
  });
}

function answerStep(res: ServerResponse, step: PollStep): void {
  if (typeof step === 'number') {
    sendJson(res, step, JSON.stringify({ error: { message: `video ${JOB} is having a moment (${step})` } }));
  } else {
    sendJson(res, 200, videoObject(step));
  }
}

async function answerBytes(res: ServerResponse, answer: Uint8Array | number, contentType: string): Promise<void> {
  if (typeof answer === 'number') {
    sendJson(res, answer, JSON.stringify({ error: { message: 'no such asset' } }));
  } else {
    await sendBytes(res, answer, contentType);
  }
}

/** An OpenAI-style videos API for one job, answering as `script` says and counting creates and polls. */
function script(steps: Script): void {
  upstream.handle(
    byPath({
      '/v1/videos': (_request, res) => {
        counts.creates += 1;
        answerStep(res, steps.create ?? { status: 'queued', progress: 0, seconds: '8' });
      },
      [`/v1/videos/${JOB}`]: (_request, res) => {
        const step = steps.polls[Math.min(counts.polls, steps.polls.length - 1)]!;
        counts.polls += 1;
        answerStep(res, step);
      },
      [`/v1/videos/${JOB}/content`]: (request, res) =>
        new URL(request.url, upstream.origin).searchParams.get('variant') === 'thumbnail'
          ? answerBytes(res, steps.thumbnail ?? png, 'image/png')
          : answerBytes(res, steps.content ?? mp4, 'video/mp4'),
    }),
  );
}

interface Task {
  context: VideoTaskContext;
  progress: number[];
  /** What was stored, and how many upstream requests had been made when it was. */
  saved: Array<{ value: string; afterRequests: number }>;
}

function task(checkpoint?: string, signal: AbortSignal = AbortSignal.timeout(10_000)): Task {
  const progress: number[] = [];
  const saved: Task['saved'] = [];
  const context: VideoTaskContext = {
    signal,
    requestId: 'req_video_1',
    warn: () => undefined,
    progress: (percent) => progress.push(percent),
    checkpoint: {
      get: () => saved.at(-1)?.value ?? checkpoint,
      set: (value) => saved.push({ value, afterRequests: upstream.requests.length }),
    },
  };
  return { context, progress, saved };
}

function model(polling: Partial<VideoPolling> = FAST): VideoModel {
  const provider = createOpenAICompatibleProvider(config(), { videoPolling: polling });
  providers.push(provider);
  return provider.models.video!('sora-2');
}

const paths = (requests: RecordedRequest[]) => requests.map((request) => `${request.method} ${request.url}`);

async function form(request: RecordedRequest): Promise<FormData> {
  return new Request('http://fake.invalid/', {
    method: 'POST',
    body: new Uint8Array(request.raw),
    headers: { 'content-type': request.headers['content-type']! },
  }).formData();
}

beforeAll(async () => {
  [mp4, png] = await Promise.all([sampleVideo(1), sampleImage('png', 64, 48)]);
  upstream = await startFakeUpstream();
});

beforeEach(() => {
  upstream.requests.length = 0;
  counts = { creates: 0, polls: 0 };
});

afterEach(async () => {
  await Promise.all(providers.splice(0).map((provider) => provider.close()));
});
afterAll(() => upstream.close());

describe('OpenAI-compatible videos', () => {
  it('creates a job, stores its id before polling, reports rising progress and returns the downloaded MP4', async () => {
    script({
      polls: [
        { status: 'in_progress', progress: 10 },
        { status: 'in_progress', progress: 60 },
        { status: 'completed', progress: 100, seconds: '8' },
      ],
    });
    const { context, progress, saved } = task();
    const result = await model().generate(OPTIONS, context);
    expect(saved).toEqual([{ value: JOB, afterRequests: 1 }]);
    expect(paths(upstream.requests)).toEqual([
      'POST /v1/videos',
      `GET /v1/videos/${JOB}`,
      `GET /v1/videos/${JOB}`,
      `GET /v1/videos/${JOB}`,
      `GET /v1/videos/${JOB}/content`,
      `GET /v1/videos/${JOB}/content?variant=thumbnail`,
    ]);
    expect(upstream.requests[1]!.headers.authorization).toBe('Bearer sk-test-video-key');
    expect(sha(result.video.data)).toBe(sha(mp4));
    expect(result.video.mediaType).toBe('video/mp4');
    expect(result.thumbnail && sha(result.thumbnail.data)).toBe(sha(png));
    expect(result.thumbnail?.mediaType).toBe('image/png');
    expect(progress).toEqual([0, 10, 60, 100]);
    // The upstream rounded 6 s up to its 8 s: usage is what it rendered.
    expect(result.usage).toEqual({ seconds: 8 });
    expect(JSON.stringify(result)).not.toContain(JOB);
  });

  it('sends the create as multipart, every field a string and the reference image a file part', async () => {
    script({ polls: [{ status: 'completed', progress: 100 }] });
    const image = { data: png, mediaType: 'image/png' };
    await model().generate({ ...OPTIONS, inputImage: image }, task().context);
    const create = upstream.requests[0]!;
    expect(create.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    // The same key on every attempt of the task: an upstream that honours it never makes the job twice.
    expect(create.headers['idempotency-key']).toBe('omnigate-req_video_1');
    const fields = await form(create);
    expect([...fields.keys()]).toEqual(['model', 'prompt', 'seconds', 'size', 'input_reference']);
    expect([fields.get('model'), fields.get('prompt'), fields.get('seconds'), fields.get('size')]).toEqual([
      'sora-2',
      OPTIONS.prompt,
      '6',
      '1280x720',
    ]);
    const file = fields.get('input_reference') as File;
    expect([file.name, file.type]).toEqual(['input_reference.png', 'image/png']);
    expect(sha(new Uint8Array(await file.arrayBuffer()))).toBe(sha(png));

    upstream.requests.length = 0;
    await model().generate(OPTIONS, task().context);
    expect((await form(upstream.requests[0]!)).has('input_reference')).toBe(false);
  });

  it('resumes the job in its checkpoint without creating another', async () => {
    // A still that is not the PNG `VideoResult` promises is left out, not served under the wrong type.
    const jpeg = await sampleImage('jpeg', 64, 48);
    script({
      polls: [
        { status: 'in_progress', progress: 40 },
        { status: 'completed', progress: 100 },
      ],
      thumbnail: jpeg,
    });
    const { context, saved, progress } = task(JOB);
    const result = await model().generate(OPTIONS, context);
    expect(counts.creates).toBe(0);
    expect(saved).toEqual([]);
    expect(paths(upstream.requests)[0]).toBe(`GET /v1/videos/${JOB}`);
    expect(sha(result.video.data)).toBe(sha(mp4));
    expect(progress).toEqual([40, 100]);
    expect(result.thumbnail).toBeUndefined();
    // Without `seconds` from the upstream, usage is the length asked for.
    expect(result.usage).toEqual({ seconds: 6 });
  });

  it('keeps polling a slow upstream, backing off, and does without a missing thumbnail', async () => {
    const queued = { status: 'queued', progress: 0 };
    // A server that restarts a job's count (50, then 30) must not make the task's progress go back.
    const polls = [
      queued,
      queued,
      queued,
      { status: 'processing', progress: 50 },
      { status: 'processing', progress: 30 },
      { status: 'completed' },
    ];
    script({ polls, thumbnail: 404 });
    const { context, progress } = task();
    const started = Date.now();
    const result = await model({ initialMs: 10, maxMs: 30 }).generate(OPTIONS, context);
    expect(counts.polls).toBe(6);
    expect(progress).toEqual([0, 50, 100]);
    // Waits 10, 15, 22.5, 30, 30, 30 ms: the backoff, not a busy loop (timers may only run late).
    expect(Date.now() - started).toBeGreaterThanOrEqual(100);
    expect(sha(result.video.data)).toBe(sha(mp4));
    expect(result.thumbnail).toBeUndefined();
  });

  it('rides out a transient 503 on a poll', async () => {
    script({ polls: [{ status: 'in_progress', progress: 20 }, 503, { status: 'completed' }] });
    const result = await model().generate(OPTIONS, task().context);
    expect(counts.polls).toBe(3);
    expect(sha(result.video.data)).toBe(sha(mp4));
  });

  it('throws a retryable error when the upstream keeps failing, with the job id masked', async () => {
    script({ polls: [503] });
    const { context, saved } = task();
    const error = await model()
      .generate(OPTIONS, context)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ status: 502, upstreamStatus: 503, retryable: undefined });
    expect((error as Error).message).not.toContain(JOB);
    // The first poll and `pollRetries` (2) more; the job stays in the checkpoint for the retry.
    expect(counts.polls).toBe(3);
    expect(saved.map((entry) => entry.value)).toEqual([JOB]);

    script({ polls: [429] });
    await expect(model().generate(OPTIONS, task().context)).rejects.toMatchObject({
      status: 429,
      retryable: undefined,
    });
  });

  it('throws a retryable error when the create fails upstream, and a final one when it is refused', async () => {
    script({ polls: [{ status: 'completed' }], create: 500 });
    await expect(model().generate(OPTIONS, task().context)).rejects.toMatchObject({
      status: 502,
      retryable: undefined,
    });
    script({ polls: [{ status: 'completed' }], create: 400 });
    const { context, saved } = task();
    await expect(model().generate(OPTIONS, context)).rejects.toMatchObject({
      status: 400,
      code: 'upstream_rejected',
      retryable: false,
    });
    expect(saved).toEqual([]);
    expect(counts.polls).toBe(0);
  });

  it('refuses to retry a job the upstream no longer knows', async () => {
    script({ polls: [404] });
    await expect(model().generate(OPTIONS, task(JOB).context)).rejects.toMatchObject({
      status: 502,
      upstreamStatus: 404,
      retryable: false,
    });
    expect(counts.polls).toBe(1);
  });

  it('throws a final error, with the upstream code and reason, for a job the upstream failed', async () => {
    script({
      polls: [
        { status: 'in_progress', progress: 30 },
        {
          status: 'failed',
          progress: 30,
          error: { code: 'content_policy_violation', message: 'The prompt was flagged by moderation.' },
        },
      ],
    });
    const error = await model()
      .generate(OPTIONS, task().context)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      retryable: false,
      code: 'content_policy_violation',
      message: expect.stringContaining('The prompt was flagged by moderation.'),
    });

    counts.polls = 0;
    script({ polls: [{ status: 'failed', error: null }] });
    await expect(model().generate(OPTIONS, task().context)).rejects.toMatchObject({
      retryable: false,
      code: 'upstream_error',
    });
  });

  it('answers 502 when the finished content is not an MP4', async () => {
    script({ polls: [{ status: 'completed' }], content: png });
    await expect(model().generate(OPTIONS, task().context)).rejects.toMatchObject({
      status: 502,
      message: expect.stringMatching(/not an MP4/),
    });
  });

  it('stops waiting as soon as the signal fires, between polls and during one', async () => {
    // Order, not a time limit: the call ends on the abort, long before the wait it was in could have: a minute
    // to the next poll, or a poll never answered. A 10 s guard turns a call that goes on waiting into a failure.
    const settled = (call: Promise<unknown>) =>
      Promise.race([
        call.then(
          () => 'answered',
          (error: unknown) => error,
        ),
        new Promise((resolve) => setTimeout(() => resolve('still waiting'), 10_000)),
      ]);
    script({ polls: [{ status: 'in_progress', progress: 50 }] });
    const between = new AbortController();
    const slowPolls = model({ initialMs: 60_000, maxMs: 60_000 }).generate(
      OPTIONS,
      task(undefined, between.signal).context,
    );
    setTimeout(() => between.abort(), 50);
    expect(await settled(slowPolls)).toMatchObject({ status: 499 });
    expect(counts.polls).toBe(0);

    // A poll the upstream never answers is cut off too.
    upstream.handle(() => undefined);
    const during = new AbortController();
    const hanging = model().generate(OPTIONS, task(JOB, during.signal).context);
    setTimeout(() => during.abort(), 50);
    expect(await settled(hanging)).toMatchObject({ status: 499 });
  });
});
