/**
 * What the built-in video engine renders: even sizes up to 1920 per side (yuv420p halves the chroma planes, so
 * an odd side cannot be encoded), 1–20 seconds at 24 frames per second. Checked twice: by the model before a
 * task is queued, and by the job itself, which may be called by anything that holds a pool slot.
 */
import { ApiError } from '../../core/api-error.js';

export const VIDEO_FPS = 24;
export const MIN_VIDEO_SIDE = 16;
export const MAX_VIDEO_SIDE = 1920;
export const MIN_VIDEO_SECONDS = 1;
export const MAX_VIDEO_SECONDS = 20;

export interface VideoShape {
  width: number;
  height: number;
  seconds: number;
}

function checkSide(value: number, name: string): void {
  if (!Number.isInteger(value) || value < MIN_VIDEO_SIDE || value > MAX_VIDEO_SIDE || value % 2 !== 0) {
    throw new ApiError(
      400,
      `The built-in video engine renders even sizes of ${MIN_VIDEO_SIDE} to ${MAX_VIDEO_SIDE} pixels per side; the ${name} ${value} is not one.`,
      { code: 'invalid_size', param: 'size' },
    );
  }
}

export function checkVideoShape(shape: VideoShape): void {
  checkSide(shape.width, 'width');
  checkSide(shape.height, 'height');
  if (!Number.isFinite(shape.seconds) || shape.seconds < MIN_VIDEO_SECONDS || shape.seconds > MAX_VIDEO_SECONDS) {
    throw new ApiError(
      400,
      `The built-in video engine renders ${MIN_VIDEO_SECONDS} to ${MAX_VIDEO_SECONDS} seconds; ${shape.seconds} is outside that.`,
      {
        code: 'invalid_value',
        param: 'seconds',
      },
    );
  }
}

/** Frames of a video of `seconds`: whole frames at 24 fps, never fewer than one second's worth. */
export function frameCount(seconds: number): number {
  return Math.max(VIDEO_FPS, Math.round(seconds * VIDEO_FPS));
}
