/**
 * Reading the video object an OpenAI-compatible upstream answers `POST /videos` and `GET /videos/{id}` with
 * (https://platform.openai.com/docs/api-reference/videos/object), and the errors its states and refusals become.
 * Only what the adapter acts on is kept: the id, where the job is, how far, its length and why it failed.
 */
import { ApiError, UpstreamError } from '../../core/api-error.js';

export type VideoJobState = 'pending' | 'completed' | 'failed';

export interface VideoJob {
  id: string;
  state: VideoJobState;
  /** 0–100, when the upstream says. */
  progress?: number;
  /** The length the upstream will render, when it says (OpenAI: a string). */
  seconds?: number;
  error?: { code?: string; message?: string };
}

/** OpenAI says `in_progress`; our own contract (and servers modelled on it) says `processing`. */
const PENDING = new Set(['queued', 'in_progress', 'processing', 'pending', 'running']);

function malformed(provider: string, what: string): UpstreamError {
  return new UpstreamError(provider, 502, 200, `Upstream ${provider} answered a video request with ${what}`);
}

function finiteNumber(value: unknown): number | undefined {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof number === 'number' && Number.isFinite(number) ? number : undefined;
}

export function readVideoJob(provider: string, answer: unknown): VideoJob {
  if (!answer || typeof answer !== 'object') {
    throw malformed(provider, 'something that is not a video object');
  }
  const record = answer as Record<string, unknown>;
  if (typeof record.id !== 'string' || !record.id) {
    throw malformed(provider, 'a video object without an id');
  }
  const status = typeof record.status === 'string' ? record.status : '';
  const state: VideoJobState | undefined = PENDING.has(status)
    ? 'pending'
    : status === 'completed' || status === 'failed'
      ? status
      : undefined;
  if (!state) {
    // Not polled on: an unknown status could be final, and polling it forever would hold the task.
    throw malformed(provider, `a video in an unknown status (${JSON.stringify(status).slice(0, 40)})`);
  }
  const progress = finiteNumber(record.progress);
  const seconds = finiteNumber(record.seconds);
  const job: VideoJob = { id: record.id, state };
  if (progress !== undefined) {
    job.progress = Math.min(100, Math.max(0, Math.round(progress)));
  }
  if (seconds !== undefined && seconds > 0) {
    job.seconds = seconds;
  }
  const error = record.error as { code?: unknown; message?: unknown } | null | undefined;
  if (error && typeof error === 'object') {
    job.error = {
      ...(typeof error.code === 'string' ? { code: error.code } : {}),
      ...(typeof error.message === 'string' ? { message: error.message } : {}),
    };
  }
  return job;
}

/** Upstream codes are kept when they look like codes; free text in `code` would not be one. */
const CODE_SHAPE = /^[a-z][a-z0-9_.-]{0,63}$/i;

/**
 * A job the upstream failed is final: running it again would pay for another generation that most likely fails
 * the same way (a refused prompt), so the task queue must not retry it.
 */
export function jobFailure(provider: string, job: VideoJob): UpstreamError {
  const code = job.error?.code && CODE_SHAPE.test(job.error.code) ? job.error.code : 'upstream_error';
  const reason = job.error?.message?.trim().slice(0, 500) || job.error?.code || 'no reason given';
  return new UpstreamError(provider, 502, 200, `Upstream ${provider} failed the video generation: ${reason}`, {
    code,
    retryable: false,
  });
}

/**
 * The task queue retries what is not marked otherwise. An upstream 4xx (other than a timeout or a rate limit)
 * refuses this very request — a bad field, our key, a job it no longer knows — and would refuse it again.
 */
export function finalIfRefused(error: unknown): unknown {
  if (!(error instanceof UpstreamError) || error.retryable !== undefined) {
    return error;
  }
  const status = error.upstreamStatus;
  if (status === null || status < 400 || status >= 500 || status === 408 || status === 429) {
    return error;
  }
  return new UpstreamError(error.provider, error.status, status, error.message, {
    type: error.type,
    code: error.code,
    headers: error.headers,
    cause: error,
    retryable: false,
  });
}

/** Worth polling again soon: the upstream is busy, slow or briefly unreachable, not refusing. */
export function isTransient(error: unknown): boolean {
  return error instanceof ApiError && error.retryable !== false && [429, 502, 503, 504].includes(error.status);
}
