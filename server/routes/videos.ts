/**
 * `/v1/videos`: video generation as durable tasks. Create checks what it can at once (model, size, seconds,
 * the input image) and answers 202 with the queued task; the task queue (calls/video-runner.ts) renders it;
 * the caller polls `GET /v1/videos/{id}` and downloads `…/content`, with byte ranges so a `<video>` seeks.
 * Every route sees only the caller's own tasks: another key's id is a 404 like an unknown one.
 */
import type { Request, Response } from 'express';
import type { AppDeps } from './app-deps.js';
import { ApiError } from '../core/api-error.js';
import type { GeneratedMedia } from '../core/models.js';
import { listPage } from '../http/list-page.js';
import type { OperationHandler, ResponseBody } from '../http/operation-types.js';
import { readInputImage, type UploadedFile } from '../calls/input-image.js';
import { prepareCall } from '../calls/prepare-call.js';
import { readStoredFile } from '../calls/read-stored-file.js';
import { sendStoredBytes } from '../calls/send-stored-bytes.js';
import type { ApiKeyRecord } from '../storage/key-store.js';
import type { VideoTask } from '../storage/video-task-store.js';

export const DEFAULT_VIDEO_MODEL = 'local:video';
const DEFAULT_SIZE = '720x1280';
const DEFAULT_SECONDS = '4';
/** The largest stored file taken as an input image by `file_id`. */
const MAX_INPUT_FILE_BYTES = 50 * 1024 * 1024;
/** How long the input image of a task is kept: past any retry of the task. */
const INPUT_IMAGE_SECONDS = 7 * 86_400;

type VideoObject = ResponseBody<'retrieveVideo', 200>;
type VideoOperations = 'createVideo' | 'listVideos' | 'retrieveVideo' | 'downloadVideoContent';

function videoObject(task: VideoTask): VideoObject {
  return {
    id: task.id,
    object: 'video',
    model: task.model,
    status: task.status,
    progress: task.status === 'completed' ? 100 : task.progress,
    created_at: Math.floor(task.createdAt / 1000),
    completed_at: task.completedAt,
    expires_at: task.expiresAt,
    prompt: task.prompt,
    seconds: String(task.seconds),
    size: `${task.width}x${task.height}`,
    error: task.status === 'failed' ? { code: task.errorCode ?? 'render_failed', message: task.errorMessage ?? 'The video could not be made.' } : null,
    remixed_from_video_id: null,
  };
}

function sizeOf(size: string): { width: number; height: number } {
  const [width, height] = size.split('x').map(Number);
  if (width % 2 !== 0 || height % 2 !== 0) {
    throw new ApiError(400, `The size ${size} must have even sides (H.264 needs them).`, { param: 'size', code: 'invalid_size' });
  }
  return { width, height };
}

export function videoHandlers(deps: Pick<AppDeps, 'registry' | 'logger' | 'shutdownSignal' | 'now' | 'media' | 'videos' | 'files'>): { [O in VideoOperations]: OperationHandler<O> } {
  const now = deps.now ?? Date.now;
  const ownTask = (res: Response, id: string): VideoTask => {
    const task = deps.videos.tasks.get(id, (res.locals.apiKey as ApiKeyRecord).id);
    if (!task) {
      throw new ApiError(404, `No video task '${id.slice(0, 128)}'. List yours with GET /v1/videos.`, { param: 'id', code: 'video_not_found' });
    }
    return task;
  };

  return {
    async createVideo(req, res) {
      const body = req.body as { model?: string; prompt: string; seconds?: string; size?: string; input_reference?: { image_url?: string; file_id?: string } | string };
      const call = prepareCall(deps, res, body.model ?? DEFAULT_VIDEO_MODEL, 'video');
      const { width, height } = sizeOf(body.size ?? DEFAULT_SIZE);
      const seconds = Number(body.seconds ?? DEFAULT_SECONDS);
      const upload = ((req as Request & { files?: UploadedFile[] }).files ?? []).find((file) => file.fieldname === 'input_reference');
      const reference = typeof body.input_reference === 'object' ? body.input_reference : undefined;
      const keyId = (res.locals.apiKey as ApiKeyRecord).id;
      const storedFile = (id: string) =>
        readStoredFile({ store: deps.files.store, blobs: deps.media.blobs }, keyId, id, {
          maxBytes: MAX_INPUT_FILE_BYTES,
          param: 'input_reference.file_id',
          nowSeconds: Math.floor(now() / 1000),
        });
      const inputImage: GeneratedMedia | undefined = await readInputImage({ upload, reference, storedFile, signal: call.context.signal });
      call.model.check?.({ prompt: body.prompt, seconds, width, height, inputImage });
      const created = now();
      const inputBlob = inputImage
        ? (await deps.media.blobs.put(inputImage.data, { prefix: 'vref', mediaType: inputImage.mediaType, expiresAt: Math.floor(created / 1000) + INPUT_IMAGE_SECONDS, now: created })).id
        : null;
      const task = deps.videos.tasks.create(
        {
          keyId: (res.locals.apiKey as ApiKeyRecord).id,
          requestId: call.context.requestId,
          model: call.resolved.entry.id,
          prompt: body.prompt,
          seconds,
          width,
          height,
          inputBlob,
        },
        created,
      );
      deps.videos.runner.wake();
      res.status(202).setHeader('Location', `/v1/videos/${task.id}`);
      res.json(videoObject(task) satisfies ResponseBody<'createVideo', 202>);
    },

    listVideos(req, res) {
      const { after, limit, order } = req.query;
      const page = deps.videos.tasks.list({ keyId: (res.locals.apiKey as ApiKeyRecord).id, after, limit: limit ?? 20, order: order ?? 'desc' });
      res.json(listPage(page.tasks.map(videoObject), page.hasMore) satisfies ResponseBody<'listVideos', 200>);
    },

    retrieveVideo(req, res) {
      res.json(videoObject(ownTask(res, req.params.id)));
    },

    async downloadVideoContent(req, res) {
      const task = ownTask(res, req.params.id);
      if (task.status !== 'completed') {
        throw new ApiError(409, `The video task is ${task.status}; its content exists once it is completed.`, { code: 'video_not_ready' });
      }
      const blob = req.query.variant === 'thumbnail' ? task.thumbnailBlob : task.videoBlob;
      const expired = task.expiresAt !== null && task.expiresAt <= Math.floor(now() / 1000);
      if (!blob || expired || !deps.media.blobs.get(blob)) {
        throw new ApiError(404, expired ? 'The content of this video has expired and was deleted.' : 'This video has no such content.', {
          code: expired ? 'video_expired' : 'video_content_not_found',
        });
      }
      await sendStoredBytes(req, res, deps.media.blobs, blob);
    },
  };
}
