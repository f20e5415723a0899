/**
 * The `VideoModel` of an OpenAI-compatible upstream (https://platform.openai.com/docs/api-reference/videos):
 * `POST /videos` (multipart, as the SDKs send it) starts a job, `GET /videos/{id}` is polled until it is
 * `completed` or `failed`, and `GET /videos/{id}/content` is the MP4 (`?variant=thumbnail` its still).
 *
 * The upstream job id goes into the task's checkpoint the moment it is known, so a generation taken over after
 * our process died polls the job it already paid for instead of starting a second one. Nothing else of the
 * upstream leaves this module: the result is bytes, and error messages have the job id masked.
 *
 * Retrying: transient poll failures (5xx, 429, timeouts, unreachable) are retried here a few times, since a
 * poll is free and one blip should not cost a task attempt; past that, and for the create and the downloads,
 * the error is thrown as the task queue's retryable kind (resuming from the checkpoint, never re-creating a job
 * that was created). Refusals (4xx) and jobs the upstream failed are thrown with `retryable: false`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiError, UpstreamError } from '../../core/api-error.js';
import type { GeneratedMedia, VideoCallOptions, VideoModel, VideoResult, VideoTaskContext } from '../../core/models.js';
import type { UpstreamHttpClient } from '../upstream/http-client.js';
import { readImageHeader } from '../upstream/image-header.js';
import { encodeMultipart, type MultipartPart } from '../upstream/multipart.js';
import { readJsonBody } from '../upstream/read-body.js';
import type { OpenAICompatibleConfig } from './http-client.js';
import { finalIfRefused, isTransient, jobFailure, readVideoJob, type VideoJob } from './video-job.js';

export interface VideoPolling {
  /** The first wait between polls; each next one is 1.5× longer, up to `maxMs`. */
  initialMs: number;
  maxMs: number;
  /** Transient poll failures in a row tolerated before the error is thrown. */
  pollRetries: number;
  /** A larger video is refused rather than held in memory. */
  maxVideoBytes: number;
}

/** Generations take minutes: a poll a second at first (short jobs finish fast), then every 5 s. */
export const DEFAULT_VIDEO_POLLING: VideoPolling = {
  initialMs: 1_000,
  maxMs: 5_000,
  pollRetries: 3,
  maxVideoBytes: 512 * 1024 * 1024,
};

export interface OpenAICompatibleVideoModelInput {
  config: OpenAICompatibleConfig;
  client: UpstreamHttpClient;
  modelId: string;
  polling?: Partial<VideoPolling>;
}

const EXTENSIONS: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp' };

/** The create body, as OpenAI's SDKs send it: every field a string, the reference image a file part. */
export function videoCreateParts(options: VideoCallOptions, modelId: string): MultipartPart[] {
  const parts: MultipartPart[] = [
    { name: 'model', value: modelId },
    { name: 'prompt', value: options.prompt },
    { name: 'seconds', value: String(options.seconds) },
    { name: 'size', value: `${options.width}x${options.height}` },
  ];
  const image = options.inputImage;
  if (image) {
    const extension = EXTENSIONS[image.mediaType] ?? 'png';
    parts.push({
      name: 'input_reference',
      filename: `input_reference.${extension}`,
      contentType: image.mediaType,
      data: image.data,
    });
  }
  return parts;
}

/** An ISO BMFF file (MP4) starts with its `ftyp` box: a 4-byte size, then the type. */
export function isMp4(bytes: Uint8Array): boolean {
  return bytes.length >= 12 && Buffer.from(bytes.subarray(4, 8)).toString('latin1') === 'ftyp';
}

function stopped(signal: AbortSignal): ApiError {
  return new ApiError(499, 'The video generation was stopped before the upstream finished.', {
    code: 'client_closed_request',
    cause: signal.reason,
  });
}

export function createOpenAICompatibleVideoModel(input: OpenAICompatibleVideoModelInput): VideoModel {
  const { config, client, modelId } = input;
  const provider = config.id;
  const polling: VideoPolling = { ...DEFAULT_VIDEO_POLLING, ...input.polling };
  const jobPath = (id: string) => `/videos/${encodeURIComponent(id)}`;

  async function upstream<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      throw finalIfRefused(error);
    }
  }

  /**
   * `idempotencyKey` is the task's create request id, the same on every attempt: a create that timed out after
   * the upstream made the job is not paid for twice where the upstream honours `Idempotency-Key` (OpenAI does).
   */
  function create(options: VideoCallOptions, signal: AbortSignal, idempotencyKey: string): Promise<VideoJob> {
    return upstream(async () => {
      const body = encodeMultipart(videoCreateParts(options, modelId));
      const response = await client.send({
        method: 'POST',
        path: '/videos',
        body,
        signal,
        accept: 'application/json',
        headers: { 'idempotency-key': idempotencyKey },
      });
      return readVideoJob(provider, await readJsonBody(provider, response));
    });
  }

  function poll(id: string, signal: AbortSignal): Promise<VideoJob> {
    return upstream(async () => {
      const response = await client.send({ method: 'GET', path: jobPath(id), signal, accept: 'application/json' });
      return readVideoJob(provider, await readJsonBody(provider, response));
    });
  }

  /** The job once it is `completed`; polls with backoff, reporting progress only ever upwards. */
  async function untilDone(id: string, first: VideoJob | undefined, context: VideoTaskContext): Promise<VideoJob> {
    const { signal } = context;
    let job = first;
    let reported = -1;
    let failures = 0;
    for (let delay = polling.initialMs; ; delay = Math.min(delay * 1.5, polling.maxMs)) {
      if (signal.aborted) {
        throw stopped(signal);
      }
      if (!job) {
        try {
          job = await poll(id, signal);
          failures = 0;
        } catch (error) {
          if (signal.aborted || !isTransient(error) || ++failures > polling.pollRetries) {
            throw signal.aborted ? stopped(signal) : error;
          }
        }
      }
      if (job?.state === 'completed') {
        return job;
      }
      if (job?.state === 'failed') {
        throw jobFailure(provider, job);
      }
      // 100 is kept for the downloaded result: an upstream at 100 may still be packaging the file.
      const progress = Math.min(job?.progress ?? 0, 99);
      if (job && progress > reported) {
        reported = progress;
        context.progress(progress);
      }
      job = undefined;
      try {
        await sleep(delay, undefined, { signal });
      } catch {
        throw stopped(signal);
      }
    }
  }

  async function readLimited(body: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
    const pieces: Buffer[] = [];
    let size = 0;
    for await (const piece of body) {
      size += piece.byteLength;
      if (size > polling.maxVideoBytes) {
        // Leaving the loop closes the connection, so the upstream stops sending.
        throw new UpstreamError(
          provider,
          502,
          200,
          `Upstream ${provider} answered a video larger than ${polling.maxVideoBytes} bytes`,
          { code: 'upstream_result_too_large', retryable: false },
        );
      }
      pieces.push(Buffer.from(piece));
    }
    return new Uint8Array(Buffer.concat(pieces));
  }

  function download(id: string, variant: 'video' | 'thumbnail', signal: AbortSignal): Promise<Uint8Array> {
    return upstream(async () => {
      const response = await client.send({
        method: 'GET',
        path: `${jobPath(id)}/content`,
        // The video is the default variant; not naming it suits servers that know no variants.
        ...(variant === 'thumbnail' ? { query: 'variant=thumbnail' } : {}),
        signal,
        accept: variant === 'video' ? 'video/mp4' : 'image/png, image/*',
      });
      return readLimited(response.body);
    });
  }

  /** Optional: a missing or unusable still is no reason to fail a finished video. */
  async function thumbnail(id: string, signal: AbortSignal): Promise<GeneratedMedia | undefined> {
    try {
      const bytes = await download(id, 'thumbnail', signal);
      // `VideoResult` promises a PNG; another format is dropped rather than served under the wrong type.
      return readImageHeader(bytes)?.mediaType === 'image/png' ? { data: bytes, mediaType: 'image/png' } : undefined;
    } catch {
      if (signal.aborted) {
        throw stopped(signal);
      }
      return undefined;
    }
  }

  async function run(
    options: VideoCallOptions,
    context: VideoTaskContext,
    ids: { job?: string },
  ): Promise<VideoResult> {
    const { signal } = context;
    let first: VideoJob | undefined;
    if (!ids.job) {
      first = await create(options, signal, `omnigate-${context.requestId}`);
      ids.job = first.id;
      // Before anything else can fail: from here on, a retry resumes this job instead of paying for another.
      context.checkpoint.set(first.id);
    }
    const done = await untilDone(ids.job, first, context);
    const bytes = await download(ids.job, 'video', signal);
    if (!isMp4(bytes)) {
      throw new UpstreamError(
        provider,
        502,
        200,
        `Upstream ${provider} answered a finished video with ${bytes.length} bytes that are not an MP4`,
      );
    }
    const still = await thumbnail(ids.job, signal);
    context.progress(100);
    return {
      video: { data: bytes, mediaType: 'video/mp4' },
      ...(still ? { thumbnail: still } : {}),
      usage: { seconds: done.seconds ?? options.seconds },
    };
  }

  return {
    provider,
    modelId,
    async generate(options: VideoCallOptions, context: VideoTaskContext): Promise<VideoResult> {
      const ids: { job?: string } = { job: context.checkpoint.get() || undefined };
      try {
        return await run(options, context, ids);
      } catch (error) {
        // The upstream's job id is ours to keep: upstream messages ("video_abc not found") must not show it.
        if (ids.job && error instanceof Error) {
          error.message = error.message.split(ids.job).join('[upstream job]');
        }
        throw error;
      }
    },
  };
}
