/** `get_video`: a video task of the caller's key, as `GET /v1/videos/{id}` shows it, with signed links when done. */
import { z } from 'zod';
import { ownVideoTask } from '../calls/video/video-tasks.js';
import { defineTool } from './tool-definition.js';
import { showVideo, videoOutput } from './video-output.js';

export const getVideoTool = defineTool({
  name: 'get_video',
  title: 'Get a video',
  description:
    'The state of a video task made with create_video: status, progress and, once completed, signed links to the MP4 and its thumbnail.',
  input: z.object({ id: z.string().min(1).max(128).describe('The task id create_video answered.') }),
  output: videoOutput,
  annotations: { readOnlyHint: true, openWorldHint: false, idempotentHint: true },
  async run(input, { deps, scope }) {
    return showVideo(deps, scope.baseUrl, await ownVideoTask(deps.videos.tasks, scope, input.id));
  },
});
