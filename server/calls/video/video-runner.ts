/**
 * Runs video tasks from the durable queue (storage/video-task-store.ts): claims up to `concurrency` tasks with
 * a lease, renews the lease while the model works, writes progress and the model's checkpoint to the row, and
 * ends each task as `completed` (bytes in the blob store, written whole before the row points at them, so a
 * partial file is never served) or `failed` (the contract's error object). A transient failure (an upstream
 * 429/5xx, a timeout, a crashed engine) goes back to the queue with exponential backoff, `maxAttempts` times.
 * The finished video and thumbnail count against the key's storage quota; a result that does not fit fails the
 * task with `storage_quota_exceeded` (nothing is kept).
 *
 * Stopping (SIGTERM) stops claiming and gives running tasks until `graceMs` to finish; the rest are handed back
 * to the queue at once, so the next start (or another process) takes them without waiting for the lease.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { ApiError } from '../../core/api-error.js';
import type { AttemptOutcome } from '../../core/call-context.js';
import type { GeneratedMedia, VideoTaskContext } from '../../core/models.js';
import type { VideoRunnerSettings } from '../../config.js';
import type { ModelRegistry } from '../../providers/registry.js';
import type { BlobStore } from '../../storage/blob-store.js';
import { chargedTo, type StorageQuota } from '../storage-quota.js';
import { PENDING_INPUT_BLOB, type VideoTask, type VideoTaskStore } from '../../storage/video-task-store.js';
import type { UsageRecorder } from '../../usage/usage-recorder.js';

export interface VideoRunnerDeps {
  tasks: VideoTaskStore;
  blobs: BlobStore;
  /** The keys' storage quota, which finished videos count against. */
  storage: StorageQuota;
  registry: ModelRegistry;
  usage: UsageRecorder;
  logger: Logger;
  settings: VideoRunnerSettings;
  now?: () => number;
}

export interface VideoRunner {
  /** Looks for work now (after a create) rather than at the next poll. */
  wake(): void;
  /** Stops the task's render if it runs in this process (the task was deleted); its result is thrown away. */
  cancel(id: string): void;
  /** Stops claiming; waits up to `graceMs` for running tasks, then hands the rest back to the queue. */
  stop(graceMs: number): Promise<void>;
}

/** The abort reason of a render whose task was deleted: nothing to record, retry or hand back. */
const TASK_DELETED = new Error('the video task was deleted');

/** Statuses worth another attempt: the upstream was busy, down or slow, or our engine died under the task. */
function isTransient(error: unknown): boolean {
  if (error instanceof ApiError) {
    return (
      error.retryable !== false &&
      (error.status === 429 ||
        error.status === 500 ||
        error.status === 502 ||
        error.status === 503 ||
        error.status === 504)
    );
  }
  return true; // an unexpected throw (a dropped connection) is worth retrying; the attempt limit bounds it
}

export function startVideoRunner(deps: VideoRunnerDeps): VideoRunner {
  const { tasks, blobs, settings, logger } = deps;
  const now = deps.now ?? Date.now;
  const runnerId = `runner_${randomUUID().slice(0, 8)}_${process.pid}`;
  const running = new Map<string, { controller: AbortController; done: Promise<void> }>();
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;

  async function keep(task: VideoTask, media: GeneratedMedia, expiresAt: number): Promise<string> {
    return (
      await blobs.put(media.data, {
        prefix: 'video',
        mediaType: media.mediaType,
        expiresAt,
        now: now(),
        owner: chargedTo(deps.storage, task.keyId),
      })
    ).id;
  }

  async function run(task: VideoTask, controller: AbortController): Promise<void> {
    const log = logger.child({ videoId: task.id, requestId: task.requestId, attempt: task.attempts });
    const lease = setInterval(
      () => {
        tasks.renew(task.id, runnerId, now(), settings.leaseMs).then(
          (ours) => {
            if (!ours) {
              controller.abort(new Error('the task is no longer ours'));
            }
          },
          // The database did not answer: the lease may still run out, in which case the next renewal says so.
          (error: unknown) => log.warn({ err: error }, 'renewing the video lease failed'),
        );
      },
      Math.max(100, Math.floor(settings.leaseMs / 3)),
    );
    lease.unref();
    const deadline = setTimeout(() => {
      controller.abort(
        new ApiError(504, `The video attempt ran longer than ${settings.attemptTimeoutMs} ms and was stopped.`, {
          code: 'video_timeout',
        }),
      );
    }, settings.attemptTimeoutMs);
    deadline.unref();
    let checkpoint = task.checkpoint ?? undefined;
    let lastProgressAt = 0;
    let placed: AttemptOutcome | undefined;
    // The task's upstream attempts over all its queue runs: each counted in the row as it starts (a run whose
    // process dies still counts), the row's sum kept here; `counting` is awaited before the record is amended.
    let upstreamAttempts = task.upstreamAttempts;
    let counting: Promise<unknown> = Promise.resolve();
    const placement = (): AttemptOutcome | undefined =>
      placed && { ...placed, attempts: Math.max(upstreamAttempts, placed.attempts) };
    const context: VideoTaskContext = {
      signal: controller.signal,
      requestId: task.requestId,
      owner: task.keyId,
      warn: ({ field, reason }) => log.warn({ field }, `accepted but not honoured: ${field} (${reason})`),
      // A model with deployments says where this attempt ran (the next attempt may move to another one); the
      // create call's usage record names the one that made the video.
      attempted: (outcome) => {
        placed = outcome;
        log.info({ deployment: outcome.deployment, attempts: outcome.attempts }, 'video attempt placed');
      },
      attemptStarted: () => {
        upstreamAttempts += 1;
        counting = counting
          .then(() => tasks.addUpstreamAttempt(task.id, runnerId))
          .then(
            (sum) => {
              if (sum !== undefined) {
                upstreamAttempts = sum;
              }
            },
            (error: unknown) => log.warn({ err: error }, 'counting a video upstream attempt failed'),
          );
      },
      progress(percent) {
        // Pollers want movement, not every frame: a write at most every 250 ms.
        if (now() - lastProgressAt >= 250) {
          lastProgressAt = now();
          tasks
            .setProgress(task.id, runnerId, percent)
            .catch((error: unknown) => log.warn({ err: error }, 'writing video progress failed'));
        }
      },
      checkpoint: {
        get: () => checkpoint,
        set(value) {
          checkpoint = value;
          tasks
            .setCheckpoint(task.id, runnerId, value)
            .catch((error: unknown) => log.warn({ err: error }, 'writing the video checkpoint failed'));
        },
      },
    };
    try {
      const resolved = deps.registry.resolve(task.model, 'video');
      const model = deps.registry.model(resolved, 'video');
      if (task.inputBlob === PENDING_INPUT_BLOB) {
        // Its grace time passed with the image never stored: the process that took it died first.
        throw new ApiError(
          500,
          'The input image of this video was lost before it was stored; create the video again.',
          { code: 'input_image_lost', retryable: false },
        );
      }
      const input = task.inputBlob ? await readBlob(blobs, task.inputBlob) : undefined;
      const result = await model.generate(
        { prompt: task.prompt, seconds: task.seconds, width: task.width, height: task.height, inputImage: input },
        context,
      );
      const expiresAt = Math.floor(now() / 1000) + settings.retentionSeconds;
      const videoBlob = await keep(task, result.video, expiresAt);
      let thumbnailBlob: string | null = null;
      try {
        thumbnailBlob = result.thumbnail ? await keep(task, result.thumbnail, expiresAt) : null;
      } catch (error) {
        await blobs.delete(videoBlob); // the quota refused the thumbnail: keep neither
        throw error;
      }
      const completed = await tasks.complete(task.id, runnerId, {
        videoBlob,
        thumbnailBlob,
        now: Math.floor(now() / 1000),
        expiresAt,
      });
      if (!completed) {
        // Taken over meanwhile: the other runner's result wins; ours is not referenced by anything.
        await blobs.delete(videoBlob);
        if (thumbnailBlob) {
          await blobs.delete(thumbnailBlob);
        }
        return;
      }
      await counting;
      const made = placement();
      await deps.usage.amend(task.requestId, {
        units: result.usage.seconds,
        media: { seconds: result.usage.seconds },
        ...(made && { placed: made }),
      });
      log.info({ seconds: result.usage.seconds }, 'video completed');
    } catch (thrown) {
      // A stopped attempt reports whatever its model threw on abort; why it was stopped is the signal's reason.
      const error: unknown = controller.signal.aborted ? controller.signal.reason : thrown;
      if (error === TASK_DELETED) {
        log.info('video task deleted while it rendered; render stopped');
        return;
      }
      if (stopping && controller.signal.aborted) {
        await tasks.release(task.id, runnerId, now(), { refundAttempt: true });
        log.info('video handed back to the queue at shutdown');
        return;
      }
      if (isTransient(error) && task.attempts < settings.maxAttempts) {
        const delay = Math.min(60_000, 1_000 * 2 ** (task.attempts - 1));
        await tasks.release(task.id, runnerId, now() + delay);
        log.warn({ err: error, retryInMs: delay }, 'video attempt failed; retrying');
        return;
      }
      const apiError = error instanceof ApiError ? error : undefined;
      await tasks.fail(task.id, runnerId, {
        code: apiError?.code ?? 'render_failed',
        message: (error instanceof Error ? error.message : String(error)).slice(0, 1000),
        now: Math.floor(now() / 1000),
      });
      // The create call's record says where the failed task's last run went and every upstream attempt made.
      await counting;
      const made = placement();
      if (made) {
        await deps.usage.amend(task.requestId, { placed: made });
      }
      log[apiError && apiError.status < 500 ? 'info' : 'error']({ err: error }, 'video failed');
    } finally {
      clearInterval(lease);
      clearTimeout(deadline);
    }
  }

  /** Claims tasks until the runner is full or none is due; never rejects. */
  async function claimAll(): Promise<void> {
    while (!stopping && running.size < settings.concurrency) {
      let task: VideoTask | undefined;
      try {
        task = await tasks.claim(runnerId, now(), settings.leaseMs);
      } catch (error) {
        logger.error({ err: error }, 'claiming a video task failed');
        return;
      }
      if (!task) {
        return;
      }
      if (stopping) {
        // Claimed while the stop began: handed straight back.
        await tasks.release(task.id, runnerId, now(), { refundAttempt: true }).catch(() => {});
        return;
      }
      const controller = new AbortController();
      const claimed = task;
      const done = run(claimed, controller)
        .catch((error: unknown) => logger.error({ err: error, videoId: claimed.id }, 'video task ended badly'))
        .finally(() => {
          running.delete(claimed.id);
          setImmediate(fill);
        });
      running.set(claimed.id, { controller, done });
    }
  }

  /** One claiming pass at a time (claims are awaited); a wake during a pass runs another after it. */
  let filling: Promise<void> | undefined;
  let fillAgain = false;
  function fill(): void {
    if (filling !== undefined) {
      fillAgain = true;
      return;
    }
    filling = (async () => {
      do {
        fillAgain = false;
        await claimAll();
      } while (fillAgain && !stopping);
      filling = undefined;
    })();
  }

  const schedule = () => {
    timer = setTimeout(() => {
      fill();
      schedule();
    }, settings.pollMs);
    timer.unref();
  };
  setImmediate(fill);
  schedule();

  return {
    wake() {
      setImmediate(fill);
    },
    cancel(id) {
      running.get(id)?.controller.abort(TASK_DELETED);
    },
    async stop(graceMs) {
      stopping = true;
      clearTimeout(timer);
      await filling;
      const all = Promise.all([...running.values()].map((entry) => entry.done));
      const graceTimer = new Promise<void>((resolve) => setTimeout(resolve, graceMs).unref());
      await Promise.race([all, graceTimer]);
      for (const entry of running.values()) {
        entry.controller.abort(new Error('shutting down'));
      }
      await all;
    },
  };
}

/** A stored blob's bytes whole (an input image); undefined when it is gone. */
export async function readBlob(blobs: BlobStore, id: string): Promise<GeneratedMedia | undefined> {
  const meta = await blobs.get(id);
  const stream = meta && (await blobs.open(id));
  if (!meta || !stream) {
    return undefined;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of stream) {
    chunks.push(chunk as Buffer);
  }
  return { data: new Uint8Array(Buffer.concat(chunks)), mediaType: meta.mediaType };
}
