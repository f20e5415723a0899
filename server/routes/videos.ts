/**
 * `/v1/videos`: video generation as durable tasks. Create checks what it can at once (model, size, seconds,
 * the input image) and answers 202 with the queued task; the task queue (calls/video/video-runner.ts) renders it;
 * the caller polls `GET /v1/videos/{id}` and downloads `…/content`, with byte ranges so a `<video>` seeks.
 * Every route sees only the caller's own tasks: another key's id is a 404 like an unknown one.
 */
import type { Request, Response } from 'express';
import type { AppDeps } from './app-deps.js';
import { scopeOf } from '../http/call-scope.js';
import { ApiError } from '../core/api-error.js';
import { listPage } from '../http/list-page.js';
import type { OperationHandler, ResponseBody } from '../http/operation-types.js';
import type { UploadedFile } from '../calls/media/input-image.js';
import { createVideoTask, deleteVideoTask, ownVideoTask, remixVideoTask } from '../calls/video/video-tasks.js';
import { videoObject } from '../formats/openai-media/video-object.js';
import { sendStoredBytes } from '../calls/send-stored-bytes.js';
import type { VideoTask } from '../storage/video-task-store.js';

export { DEFAULT_VIDEO_MODEL } from '../calls/video/video-tasks.js';

type VideoOperations =
  | 'createVideo'
  | 'listVideos'
  | 'retrieveVideo'
  | 'downloadVideoContent'
  | 'deleteVideo'
  | 'remixVideo';

export function videoHandlers(
  deps: Pick<AppDeps, 'registry' | 'logger' | 'shutdownSignal' | 'now' | 'media' | 'videos' | 'files'>,
): { [O in VideoOperations]: OperationHandler<O> } {
  const now = deps.now ?? Date.now;
  const ownTask = (res: Response, id: string): Promise<VideoTask> => ownVideoTask(deps.videos.tasks, scopeOf(res), id);
  const show = async (task: VideoTask) => videoObject(task, await deps.videos.tasks.remixedFrom(task.id));

  return {
    async createVideo(req, res) {
      const body = req.body as {
        model?: string;
        prompt: string;
        seconds?: string;
        size?: string;
        input_reference?: { image_url?: string; file_id?: string } | string;
      };
      const upload = ((req as Request & { files?: UploadedFile[] }).files ?? []).find(
        (file) => file.fieldname === 'input_reference',
      );
      const reference = typeof body.input_reference === 'object' ? body.input_reference : undefined;
      const task = await createVideoTask(deps, scopeOf(res), {
        model: body.model,
        prompt: body.prompt,
        seconds: body.seconds,
        size: body.size,
        upload,
        reference,
      });
      res.status(202).setHeader('Location', `/v1/videos/${task.id}`);
      res.json(videoObject(task) satisfies ResponseBody<'createVideo', 202>);
    },

    async listVideos(req, res) {
      const { after, limit, order } = req.query;
      const page = await deps.videos.tasks.list({
        keyId: scopeOf(res).key.id,
        after,
        limit: limit ?? 20,
        order: order ?? 'desc',
      });
      res.json(
        listPage(await Promise.all(page.tasks.map(show)), page.hasMore) satisfies ResponseBody<'listVideos', 200>,
      );
    },

    async retrieveVideo(req, res) {
      res.json(await show(await ownTask(res, req.params.id)));
    },

    async deleteVideo(req, res) {
      const task = await deleteVideoTask(deps, scopeOf(res), req.params.id);
      res.json({ id: task.id, object: 'video.deleted', deleted: true } satisfies ResponseBody<'deleteVideo', 200>);
    },

    async remixVideo(req, res) {
      const task = await remixVideoTask(deps, scopeOf(res), req.params.id, req.body.prompt);
      res.status(202).setHeader('Location', `/v1/videos/${task.id}`);
      res.json(videoObject(task, req.params.id) satisfies ResponseBody<'remixVideo', 202>);
    },

    async downloadVideoContent(req, res) {
      const task = await ownTask(res, req.params.id);
      if (task.status !== 'completed') {
        throw new ApiError(409, `The video task is ${task.status}; its content exists once it is completed.`, {
          code: 'video_not_ready',
        });
      }
      const blob = req.query.variant === 'thumbnail' ? task.thumbnailBlob : task.videoBlob;
      const expired = task.expiresAt !== null && task.expiresAt <= Math.floor(now() / 1000);
      if (expired) {
        throw new ApiError(404, 'The content of this video has expired and was deleted.', { code: 'video_expired' });
      }
      const noContent = () => new ApiError(404, 'This video has no such content.', { code: 'video_content_not_found' });
      if (!blob) {
        throw noContent();
      }
      await sendStoredBytes(req, res, deps.media.blobs, blob, { missing: noContent });
    },
  };
}
