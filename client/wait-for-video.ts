/**
 * Polls `GET /v1/videos/{id}` until the task is `completed` (resolves with it) or `failed` (throws an
 * `OmnigateError` carrying the task's `error`), or until `timeoutMs` passes (throws, code `video_wait_timeout`).
 */
import { OmnigateError, REQUEST_ID_HEADER } from './omnigate-error.js';
import type { CallOptions, RawClient } from './raw-client.js';
import type { Video } from './types.js';
import { unwrap } from './unwrap.js';

export interface WaitForVideoOptions extends CallOptions {
  /** Called with the task after every poll, whatever its status. */
  onProgress?: (video: Video) => void;
  /** Give up after this long; default 10 minutes. */
  timeoutMs?: number;
  /** Pause between polls; default 2 seconds. */
  intervalMs?: number;
}

const DEFAULT_TIMEOUT_MS = 10 * 60_000;
const DEFAULT_INTERVAL_MS = 2_000;

export async function waitForVideo(raw: RawClient, id: string, options: WaitForVideoOptions = {}): Promise<Video> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const intervalMs = options.intervalMs ?? DEFAULT_INTERVAL_MS;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await raw.GET('/v1/videos/{id}', { params: { path: { id } }, signal: options.signal });
    const video = unwrap(result);
    const requestId = result.response.headers.get(REQUEST_ID_HEADER);
    options.onProgress?.(video);
    if (video.status === 'completed') {
      return video;
    }
    if (video.status === 'failed') {
      throw new OmnigateError({
        status: null,
        type: 'video_failed',
        code: video.error?.code ?? null,
        param: null,
        message: video.error?.message ?? `Video task ${id} failed.`,
        requestId,
        body: video,
      });
    }
    const remaining = deadline - Date.now();
    if (remaining <= 0) {
      throw new OmnigateError({
        status: null,
        type: 'timeout_error',
        code: 'video_wait_timeout',
        param: null,
        message: `Video task ${id} was still ${video.status} (${video.progress}%) after ${timeoutMs} ms.`,
        requestId,
        body: video,
      });
    }
    await sleep(Math.min(intervalMs, remaining), options.signal);
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
