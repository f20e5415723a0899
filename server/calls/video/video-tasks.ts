/**
 * Creating a video task and showing one, as `/v1/videos` does, shared by those routes and the `create_video` /
 * `get_video` tools: create checks what it can at once (model, size, seconds, the input image by what needs no
 * I/O: an upload's or data URL's header, a URL's form, a file id's row), queues the task and wakes the runner.
 * Nothing slow comes before the answer: an image URL is fetched, a stored file read and any input image stored
 * after it (a file read or write waits on libuv's thread pool, which the media workers' image work also fills;
 * a fetch waits on a stranger's server), and the task becomes runnable once it is. A failure there (the URL
 * refused or unreachable, not an image, too many pixels, the quota full) fails the task with the error the
 * request would have been refused with. Every lookup is by the caller's key: another key's id is
 * the same 404 as an unknown one. A key holds at most `maxActivePerKey` tasks queued or processing: the next is
 * a 429, refused before the input image is fetched and again, atomically, when the row is inserted.
 */
import type { CallScope } from '../../http/call-scope.js';
import { ApiError } from '../../core/api-error.js';
import { PENDING_INPUT_BLOB, type VideoTask, type VideoTaskStore } from '../../storage/video-task-store.js';
import {
  planInputImage,
  storedImageFiles,
  type InputImageSettings,
  type PlannedInputImage,
  type UploadedFile,
} from '../media/input-image.js';
import type { MediaDeps } from '../link-media.js';
import type { FileStore } from '../../storage/file-store.js';
import { prepareCall, type CallDeps } from '../prepare-call.js';
import { chargedTo, checkStorageRoom } from '../storage-quota.js';
import { readBlob, type VideoRunner } from './video-runner.js';

export const DEFAULT_VIDEO_MODEL = 'local:video';
const DEFAULT_SIZE = '720x1280';
const DEFAULT_SECONDS = '4';
/** How long the input image of a task is kept: past any retry of the task. */
const INPUT_IMAGE_SECONDS = 7 * 86_400;
/** How long a task waits for its input image to be stored before a runner takes it (and fails it: the image is lost). */
const INPUT_STORE_GRACE_MS = 10 * 60_000;
/** The wait a refused create is told: room comes when one of the key's own tasks ends, which is not known ahead. */
const QUEUE_FULL_RETRY_SECONDS = 20;

/** The video queue as create and show use it: the rows, the runner to wake, and each key's cap. */
export interface VideoQueue {
  tasks: VideoTaskStore;
  runner: VideoRunner;
  /** A key's tasks queued or processing at once (`OMNIGATE_VIDEO_TASKS_PER_KEY`). */
  maxActivePerKey: number;
}

export interface VideoDeps extends CallDeps {
  media: MediaDeps;
  videos: VideoQueue;
  files: { store: FileStore };
  /** Tests replace DNS for input image URLs and may let them reach loopback (see ToolSettings). */
  tools?: { resolveHost?: InputImageSettings['resolve']; blockedReason?: InputImageSettings['blockedReason'] };
  now?: () => number;
}

function sizeOf(size: string): { width: number; height: number } {
  const [width, height] = size.split('x').map(Number);
  if (width === undefined || height === undefined || width % 2 !== 0 || height % 2 !== 0) {
    throw new ApiError(400, `The size ${size} must have even sides (H.264 needs them).`, {
      param: 'size',
      code: 'invalid_size',
    });
  }
  return { width, height };
}

export interface VideoRequest {
  model?: string;
  prompt: string;
  seconds?: string;
  size?: string;
  upload?: UploadedFile;
  reference?: { image_url?: string; file_id?: string };
  /** An input image planned already (a remix's copy of its original's), taken instead of `upload`/`reference`. */
  inputImage?: PlannedInputImage;
}

function queueFullError(maxActive: number): ApiError {
  return new ApiError(
    429,
    `This key already has ${maxActive} video tasks queued or processing, its limit (OMNIGATE_VIDEO_TASKS_PER_KEY). Retry once one of them has finished.`,
    { code: 'video_task_limit_exceeded', headers: { 'retry-after': String(QUEUE_FULL_RETRY_SECONDS) } },
  );
}

export async function createVideoTask(deps: VideoDeps, scope: CallScope, request: VideoRequest): Promise<VideoTask> {
  const now = deps.now ?? Date.now;
  const call = prepareCall(deps, scope, request.model ?? DEFAULT_VIDEO_MODEL, 'video');
  const { width, height } = sizeOf(request.size ?? DEFAULT_SIZE);
  const seconds = Number(request.seconds ?? DEFAULT_SECONDS);
  const keyId = scope.key.id;
  const { maxActivePerKey } = deps.videos;
  // Refused before any work (fetching or storing the input image); checked again atomically at the insert.
  if ((await deps.videos.tasks.activeCount(keyId)) >= maxActivePerKey) {
    throw queueFullError(maxActivePerKey);
  }
  await checkStorageRoom(deps.media.storage, keyId, now()); // its video would count against a quota already full
  const storedFile = storedImageFiles({ store: deps.files.store, blobs: deps.media.blobs }, keyId, {
    param: 'input_reference.file_id',
    nowSeconds: Math.floor(now() / 1000),
  });
  const inputImage =
    request.inputImage ??
    (await planInputImage(
      { upload: request.upload, reference: request.reference, storedFile },
      { resolve: deps.tools?.resolveHost, blockedReason: deps.tools?.blockedReason },
    ));
  const inHand = inputImage && 'image' in inputImage ? inputImage.image : undefined;
  call.model.check?.({ prompt: request.prompt, seconds, width, height, inputImage: inHand });
  const created = now();
  const outcome = await deps.videos.tasks.createWithin(
    {
      keyId,
      requestId: call.context.requestId,
      model: call.resolved.entry.id,
      prompt: request.prompt,
      seconds,
      width,
      height,
      inputBlob: inputImage ? PENDING_INPUT_BLOB : null,
    },
    created,
    maxActivePerKey,
    { runAfter: inputImage ? created + INPUT_STORE_GRACE_MS : created },
  );
  if ('refused' in outcome) {
    throw queueFullError(maxActivePerKey);
  }
  if (inputImage) {
    void storeInputImage(deps, outcome.task, inputImage, created);
  } else {
    deps.videos.runner.wake();
  }
  return outcome.task;
}

/**
 * After the answer: fetches or reads the task's input image if it is not in hand, keeps it (charged to its
 * key's storage quota) and makes the task runnable. Any refusal on the way (the URL, the bytes, the quota) fails
 * the task with that error; a task deleted meanwhile drops the image.
 */
async function storeInputImage(
  deps: VideoDeps,
  task: VideoTask,
  planned: PlannedInputImage,
  created: number,
): Promise<void> {
  const now = deps.now ?? Date.now;
  try {
    // Not the request's signal: the request has been answered. A shutdown stops the fetch; the task then fails.
    const image = 'image' in planned ? planned.image : await planned.load(deps.shutdownSignal ?? neverAborted);
    const blob = await deps.media.blobs.put(image.data, {
      prefix: 'vref',
      mediaType: image.mediaType,
      expiresAt: Math.floor(created / 1000) + INPUT_IMAGE_SECONDS,
      now: created,
      owner: chargedTo(deps.media.storage, task.keyId),
    });
    if (!(await deps.videos.tasks.attachInput(task.id, blob.id, now()))) {
      await deps.media.blobs.delete(blob.id);
      return;
    }
    deps.videos.runner.wake();
  } catch (error) {
    const apiError = error instanceof ApiError ? error : undefined;
    await deps.videos.tasks
      .failQueued(task.id, {
        code: apiError?.code ?? 'input_image_not_stored',
        message: apiError?.message ?? 'The input image could not be stored.',
        now: Math.floor(now() / 1000),
      })
      .catch((failError: unknown) =>
        deps.logger.error({ err: failError, videoId: task.id }, 'failing the video task failed'),
      );
    deps.logger[apiError && apiError.status < 500 ? 'info' : 'error'](
      { err: error, videoId: task.id, requestId: task.requestId },
      'video input image not stored',
    );
  }
}

const neverAborted = new AbortController().signal;

function videoNotFound(id: string): ApiError {
  return new ApiError(404, `No video task '${id.slice(0, 128)}'. List yours with GET /v1/videos.`, {
    param: 'id',
    code: 'video_not_found',
  });
}

export async function ownVideoTask(
  tasks: VideoTaskStore,
  scope: Pick<CallScope, 'key'>,
  id: string,
): Promise<VideoTask> {
  const task = await tasks.get(id, scope.key.id);
  if (!task) {
    throw videoNotFound(id);
  }
  return task;
}

/**
 * A new task from a completed one: the original's model, length, size and input image (a copy, so deleting
 * either task leaves the other whole) with a new prompt, made by `createVideoTask` like any other.
 */
export async function remixVideoTask(
  deps: VideoDeps,
  scope: CallScope,
  originalId: string,
  prompt: string,
): Promise<VideoTask> {
  const original = await ownVideoTask(deps.videos.tasks, scope, originalId);
  if (original.status !== 'completed') {
    throw new ApiError(409, `The video task is ${original.status}; only a completed video can be remixed.`, {
      code: 'video_not_ready',
    });
  }
  // Read after the answer like any input image; an original's image gone meanwhile fails the new task.
  const inputBlob = original.inputBlob;
  const inputImage: PlannedInputImage | undefined = inputBlob
    ? {
        load: async () => {
          const image = await readBlob(deps.media.blobs, inputBlob);
          if (!image) {
            throw new ApiError(409, 'The input image of the original video task is gone.', {
              code: 'input_image_gone',
            });
          }
          return image;
        },
      }
    : undefined;
  const task = await createVideoTask(deps, scope, {
    model: original.model,
    prompt,
    seconds: String(original.seconds),
    size: `${original.width}x${original.height}`,
    inputImage,
  });
  await deps.videos.tasks.setRemixedFrom(task.id, original.id);
  return task;
}

/**
 * Deletes the key's task and its bytes. A running render is cancelled first: this process's runner stops it at
 * once; a runner elsewhere loses its lease renewal and stops, and anything it still writes finds no row and is
 * deleted by it (video-runner.ts).
 */
export async function deleteVideoTask(deps: VideoDeps, scope: Pick<CallScope, 'key'>, id: string): Promise<VideoTask> {
  const task = await deps.videos.tasks.delete(id, scope.key.id);
  if (!task) {
    throw videoNotFound(id);
  }
  deps.videos.runner.cancel(task.id);
  await Promise.all(
    [task.videoBlob, task.thumbnailBlob, task.inputBlob]
      .filter((blob): blob is string => blob !== null)
      .map((blob) => deps.media.blobs.delete(blob)),
  );
  return task;
}
