/**
 * `local:video`: the built-in video engine. One generation holds one pool slot: the worker draws the prompt's
 * animated scene and encodes it (engines/video), reporting progress per frame to the task. The size and length
 * are checked before the task is queued (`check`) and again by the job. ffmpeg's temp file goes into a
 * directory this model makes and removes, because a stopped job's worker is terminated before it could clean up;
 * the directories of a killed process are swept when the next one creates the model (video-temp-dirs.ts).
 */
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import type { VideoCallOptions, VideoModel, VideoResult, VideoTaskContext } from '../../core/models.js';
import type { MediaPool } from '../../engines/media-pool.js';
import { checkVideoShape } from '../../engines/video/video-limits.js';
import { makeVideoTempDir, sweepStaleVideoTempDirs } from './video-temp-dirs.js';

export interface LocalVideoOptions {
  /** The ffmpeg binary; `null` behaves as a platform without one (the WebAssembly encoder). */
  ffmpeg?: string | null;
  /** Where temp directories go; the system's by default. */
  tempRoot?: string;
}

export function createLocalVideoModel(pool: MediaPool, settings: LocalVideoOptions = {}): VideoModel {
  const tempRoot = settings.tempRoot ?? tmpdir();
  // Off the start path; a failure to sweep (a temp directory we may not list) costs only disk.
  const swept = sweepStaleVideoTempDirs(tempRoot).catch(() => []);
  return {
    provider: 'local',
    modelId: 'video',
    check(options: VideoCallOptions) {
      checkVideoShape(options);
    },
    async generate(options: VideoCallOptions, context: VideoTaskContext): Promise<VideoResult> {
      checkVideoShape(options);
      await swept;
      const workDir = await makeVideoTempDir(tempRoot);
      try {
        const rendered = await pool.use(
          context.signal,
          (slot) =>
            slot.run(
              'video',
              {
                prompt: options.prompt,
                width: options.width,
                height: options.height,
                seconds: options.seconds,
                inputImage: options.inputImage?.data,
                workDir,
                ffmpeg: settings.ffmpeg,
              },
              { onProgress: context.progress },
            ),
          { owner: context.owner },
        );
        return {
          video: { data: rendered.video, mediaType: 'video/mp4' },
          thumbnail: { data: rendered.thumbnail, mediaType: 'image/png' },
          usage: { seconds: rendered.seconds },
        };
      } finally {
        await rm(workDir, { recursive: true, force: true });
      }
    },
  };
}
