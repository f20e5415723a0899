/**
 * A video task as the contract shows it (`Video`): the answer of `/v1/videos` and the heart of the video tools'
 * output (tools/video-output.ts), made here for both.
 */
import type { components } from '../../../generated/api.js';

export type VideoObject = components['schemas']['Video'];

/** What the object shows of a task (storage/video-task-store.ts `VideoTask` has these and more). */
export interface VideoTaskView {
  id: string;
  model: string;
  status: VideoObject['status'];
  progress: number;
  createdAt: number;
  completedAt: number | null;
  expiresAt: number | null;
  prompt: string;
  seconds: number;
  width: number;
  height: number;
  errorCode: string | null;
  errorMessage: string | null;
}

/** The task as the contract shows it; `remixedFrom` is the original's id when the task is a remix. */
export function videoObject(task: VideoTaskView, remixedFrom: string | null = null): VideoObject {
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
    error:
      task.status === 'failed'
        ? { code: task.errorCode ?? 'render_failed', message: task.errorMessage ?? 'The video could not be made.' }
        : null,
    remixed_from_video_id: remixedFrom,
  };
}
