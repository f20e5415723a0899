/** `text_to_speech`: the speech synthesis of `POST /v1/audio/speech` (calls/media/synthesize-speech.ts). */
import { z } from 'zod';
import { synthesizeSpeech } from '../calls/media/synthesize-speech.js';
import { encodeSpeechToolAnswer } from '../formats/openai-media/media-answer.js';
import { defineTool } from './tool-definition.js';
import { checkToolStorageRoom, toolMedia } from './tool-media.js';

export const textToSpeechTool = defineTool({
  name: 'text_to_speech',
  title: 'Text to speech',
  description:
    'Speak a text aloud. Returns the audio inline (when under 1 MiB) and as a signed URL. The built-in offline voices (model local:speech) need no network.',
  input: z.object({
    input: z.string().min(1).max(4096).describe('The text to speak.'),
    model: z.string().min(1).max(256).default('local:speech').describe('A speech model id or alias of GET /v1/models.'),
    voice: z.string().min(1).max(128).default('alloy'),
    format: z
      .enum(['mp3', 'wav', 'opus', 'aac', 'flac'])
      .default('mp3')
      .describe('The audio format (MCP audio content; pcm is not offered here).'),
    speed: z.number().min(0.25).max(4).optional(),
    language: z
      .string()
      .regex(/^(auto|[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*)$/)
      .optional(),
  }),
  output: z.object({
    model: z.string(),
    media_type: z.string(),
    url: z.string(),
    characters: z.number().int(),
    seconds: z.number(),
  }),
  annotations: { readOnlyHint: false, openWorldHint: false, idempotentHint: true },
  async run(input, { deps, scope }) {
    await checkToolStorageRoom(deps, scope);
    const spoken = await synthesizeSpeech(deps, scope, {
      input: input.input,
      model: input.model,
      voice: input.voice,
      response_format: input.format,
      speed: input.speed,
      language: input.language,
    });
    const audio = await toolMedia(deps, scope, 'audio', spoken.audio, `speech.${input.format}`);
    return {
      ...encodeSpeechToolAnswer(spoken, input.format, audio.url),
      media: [audio],
    };
  },
});
