/**
 * `create_video`: queues a video task as `POST /v1/videos` does (calls/video/video-tasks.ts). With `wait_seconds`
 * the call stays open that long while the task renders, sending MCP progress notifications (when the client
 * asked for them with a progress token) and answering with the finished video if it finished in time;
 * otherwise it answers at once with the queued task, to be followed with `get_video`.
 */
import { z } from 'zod';
import { createVideoTask } from '../calls/video/video-tasks.js';
import { defineTool } from './tool-definition.js';
import { showVideo, videoOutput } from './video-output.js';

const POLL_MS = 250;

export const createVideoTool = defineTool({
  name: 'create_video',
  title: 'Create a video',
  description:
    'Start generating a short video (MP4, H.264) from a prompt and optionally a start image URL. Answers with the task; give wait_seconds to wait for the result with progress updates, else poll get_video.',
  input: z.object({
    prompt: z.string().min(1).max(32000),
    model: z
      .string()
      .min(1)
      .max(256)
      .optional()
      .describe('A video model id or alias (default local:video, the built-in offline renderer).'),
    seconds: z.enum(['4', '8', '12']).optional().describe('Length in seconds (default 4).'),
    size: z
      .string()
      .regex(/^[0-9]{2,4}x[0-9]{2,4}$/)
      .optional()
      .describe('WIDTHxHEIGHT, even sides (default 720x1280).'),
    image_url: z
      .string()
      .regex(/^(https?:\/\/|data:)/)
      .optional()
      .describe('A start image: an http(s) URL or a data: URL.'),
    wait_seconds: z
      .number()
      .int()
      .min(0)
      .max(300)
      .optional()
      .describe('Wait up to this long for the video, reporting progress (default 0: answer at once).'),
  }),
  output: videoOutput,
  annotations: { readOnlyHint: false, openWorldHint: false, idempotentHint: false },
  async run(input, { deps, scope, progress }) {
    let task = await createVideoTask(deps, scope, {
      model: input.model,
      prompt: input.prompt,
      seconds: input.seconds,
      size: input.size,
      reference: input.image_url ? { image_url: input.image_url } : undefined,
    });
    const deadline = Date.now() + (input.wait_seconds ?? 0) * 1000;
    const keyId = scope.key.id;
    let reported = -1;
    while (
      (task.status === 'queued' || task.status === 'processing') &&
      Date.now() < deadline &&
      !scope.signal.aborted
    ) {
      if (task.progress !== reported) {
        reported = task.progress;
        await progress(task.progress, 100, `video ${task.status}`);
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      task = (await deps.videos.tasks.get(task.id, keyId)) ?? task;
    }
    if (task.status === 'completed' && reported !== 100) {
      await progress(100, 100, 'video completed');
    }
    return showVideo(deps, scope.baseUrl, task);
  },
});
