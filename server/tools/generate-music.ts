/** `generate_music`: the music generation of `POST /v1/music/generations` (calls/media/compose-music.ts). */
import { z } from 'zod';
import { composeMusic } from '../calls/media/compose-music.js';
import { ApiError } from '../core/api-error.js';
import { encodeMusicToolAnswer } from '../formats/openai-media/media-answer.js';
import { defineTool } from './tool-definition.js';
import { checkToolStorageRoom, toolMedia } from './tool-media.js';

export const generateMusicTool = defineTool({
  name: 'generate_music',
  title: 'Generate music',
  description:
    'Compose a piece of music (MP3) from a description and/or lyrics. Returns the audio inline (when under 1 MiB) and as a signed URL. The built-in offline composer (local:music) plays instruments only and takes lyrics as a mood hint.',
  input: z.object({
    prompt: z.string().max(2000).optional().describe('Style, mood, instruments, tempo.'),
    lyrics: z.string().min(1).max(3500).optional(),
    model: z.string().min(1).max(256).optional(),
    duration: z.number().min(1).max(300).optional().describe('Seconds (default 30).'),
    instrumental: z.boolean().optional(),
    seed: z.number().int().min(0).max(4294967295).optional(),
  }),
  output: z.object({ model: z.string(), media_type: z.string(), url: z.string(), seconds: z.number() }),
  annotations: { readOnlyHint: false, openWorldHint: false, idempotentHint: false },
  async run(input, { deps, scope }) {
    if (!input.prompt && !input.lyrics) {
      throw new ApiError(400, 'Give `prompt` or `lyrics` (or both).', { param: 'prompt' });
    }
    await checkToolStorageRoom(deps, scope);
    const composed = await composeMusic(deps, scope, { ...input, response_format: 'url' });
    const audio = await toolMedia(deps, scope, 'audio', composed.audio, 'music.mp3');
    return {
      ...encodeMusicToolAnswer(composed, audio.url),
      media: [audio],
    };
  },
});
