/**
 * The video task as the video tools show it: the `/v1/videos` object, plus signed links to the video and its
 * thumbnail once the task is completed (a tool caller has no way to send our key to `…/content`).
 */
import { z } from 'zod';
import { videoObject } from '../formats/openai-media/video-object.js';
import type { VideoTask } from '../storage/video-task-store.js';
import type { ToolDeps, ToolMedia } from './tool-definition.js';

export const videoOutput = z.object({
  id: z.string(),
  status: z.enum(['queued', 'processing', 'completed', 'failed']),
  progress: z.number(),
  model: z.string(),
  prompt: z.string().nullable(),
  seconds: z.string(),
  size: z.string(),
  created_at: z.number().int(),
  completed_at: z.number().int().nullable(),
  expires_at: z.number().int().nullable(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  video_url: z.string().nullable().describe('A signed link to the MP4 once completed.'),
  thumbnail_url: z.string().nullable(),
});

type VideoOutput = z.input<typeof videoOutput>;

/** Links live as long as media links do, but never past the task's own expiry (its bytes go then). */
async function linkTo(deps: ToolDeps, baseUrl: string, blob: string | null, task: VideoTask): Promise<string | null> {
  if (!blob || !(await deps.media.blobs.get(blob))) {
    return null;
  }
  const ttl = Math.floor((deps.now ?? Date.now)() / 1000) + deps.media.linkTtlSeconds;
  const expiresAt = task.expiresAt !== null ? Math.min(task.expiresAt, ttl) : ttl;
  return `${baseUrl}${deps.media.links.pathFor(blob, expiresAt)}`;
}

export async function showVideo(
  deps: ToolDeps,
  baseUrl: string,
  task: VideoTask,
): Promise<{ output: VideoOutput; text: string; media: ToolMedia[] }> {
  const object = videoObject(task);
  const completed = task.status === 'completed';
  const video_url = completed ? await linkTo(deps, baseUrl, task.videoBlob, task) : null;
  const thumbnail_url = completed ? await linkTo(deps, baseUrl, task.thumbnailBlob, task) : null;
  const output: VideoOutput = {
    id: object.id,
    status: object.status,
    progress: object.progress,
    model: object.model,
    prompt: object.prompt,
    seconds: object.seconds,
    size: object.size,
    created_at: object.created_at,
    completed_at: object.completed_at ?? null,
    expires_at: object.expires_at ?? null,
    error: object.error ?? null,
    video_url,
    thumbnail_url,
  };
  const state =
    task.status === 'completed'
      ? `completed: ${video_url ?? 'its content has expired'}`
      : task.status === 'failed'
        ? `failed: ${object.error?.message ?? 'unknown error'}`
        : `${task.status} (${object.progress}%); ask get_video with id ${task.id} again later`;
  const media: ToolMedia[] = video_url
    ? [{ kind: 'video', mediaType: 'video/mp4', url: video_url, name: `${task.id}.mp4` }]
    : [];
  return { output, text: `Video ${task.id} (${object.size}, ${object.seconds} s, ${object.model}) is ${state}`, media };
}
