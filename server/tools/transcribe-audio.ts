/**
 * `transcribe_audio` (MCP): the transcription of `POST /v1/audio/transcriptions` (or, with `task: translate`,
 * the translation into English of `/v1/audio/translations`), run by the same code (calls/audio/). The audio is
 * a file the key uploaded (`file_id`, from `POST /v1/files`) or base64 bytes (`audio_base64`, bounded by the
 * JSON body limit), checked and measured exactly as the REST operations check theirs. There is no built-in
 * model: without a configured transcription model the call fails with `capability_unavailable`.
 */
import { z } from 'zod';
import { ApiError } from '../core/api-error.js';
import { decodeBase64 } from '../engines/body/large-base64.js';
import { transcribeAudio, DEFAULT_TRANSCRIPTION_SETTINGS } from '../calls/audio/transcribe-audio.js';
import { findStoredFile } from '../calls/files/read-stored-file.js';
import { encodeTranscript } from '../formats/openai-audio/transcription-answer.js';
import { decodeTranscriptionRequest } from '../formats/openai-audio/transcription-request.js';
import { defineTool, type ToolInvocation } from './tool-definition.js';

const FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt', 'diarized_json'] as const;

async function audioOf(
  input: { file_id?: string; audio_base64?: string; filename?: string },
  { deps, scope }: ToolInvocation,
): Promise<{ data: Uint8Array; filename: string }> {
  if ((input.file_id === undefined) === (input.audio_base64 === undefined)) {
    throw new ApiError(400, 'Give the audio as exactly one of `file_id` or `audio_base64`.', {
      param: 'file_id',
      code: 'missing_audio',
    });
  }
  if (input.audio_base64 !== undefined) {
    return {
      data: await decodeBase64(input.audio_base64, { owner: scope.key.id }),
      filename: input.filename ?? 'audio',
    };
  }
  const found = await findStoredFile(
    { store: deps.files.store, blobs: deps.media.blobs },
    scope.key.id,
    input.file_id!,
    {
      maxBytes: deps.transcription?.maxBytes ?? DEFAULT_TRANSCRIPTION_SETTINGS.maxBytes,
      param: 'file_id',
      nowSeconds: Math.floor((deps.now ?? Date.now)() / 1000),
    },
  );
  const data = await found?.read();
  if (!data) {
    throw new ApiError(404, `No file ${input.file_id} of this key. List them with GET /v1/files.`, {
      param: 'file_id',
      code: 'file_not_found',
    });
  }
  return { data, filename: input.filename ?? input.file_id! };
}

export const transcribeAudioTool = defineTool({
  name: 'transcribe_audio',
  title: 'Transcribe audio',
  description:
    'Write down what is said in an audio file (WAV, MP3, Ogg, FLAC, WebM, M4A), or translate it into English ' +
    '(task translate). Give an uploaded file id (POST /v1/files) or base64 audio. Needs a configured ' +
    'transcription model (an upstream such as whisper-1): there is no built-in one.',
  input: z.object({
    file_id: z.string().min(1).max(128).optional().describe('An uploaded file of this key (POST /v1/files).'),
    audio_base64: z.string().min(1).max(48_000_000).optional().describe('The audio bytes, base64.'),
    filename: z.string().min(1).max(255).optional().describe('The file name the upstream is told (its stem).'),
    model: z
      .string()
      .min(1)
      .max(256)
      .optional()
      .describe('A transcription model of GET /v1/models; default the first configured one.'),
    task: z.enum(['transcribe', 'translate']).default('transcribe'),
    language: z.string().min(1).max(32).optional().describe('The language spoken, ISO-639-1 (transcribe only).'),
    prompt: z.string().max(32000).optional(),
    response_format: z
      .enum(FORMATS)
      .default('text')
      .describe('The shape of `content`: text, srt, vtt, json, verbose_json or diarized_json (speakers).'),
  }),
  output: z.object({
    model: z.string(),
    text: z.string(),
    seconds: z.number(),
    response_format: z.enum(FORMATS),
    /** The answer in `response_format`, as text (JSON formats serialised). */
    content: z.string(),
  }),
  annotations: { readOnlyHint: true, openWorldHint: true, idempotentHint: true },
  async run(input, invocation) {
    const { deps, scope } = invocation;
    const model =
      input.model ?? deps.registry.list(scope.key).find((entry) => entry.type === 'transcription')?.id ?? 'whisper-1';
    const request = decodeTranscriptionRequest(
      {
        file: '',
        model,
        response_format: input.response_format,
        ...(input.language !== undefined ? { language: input.language } : {}),
        ...(input.prompt !== undefined ? { prompt: input.prompt } : {}),
        ...(input.response_format === 'verbose_json' ? { 'timestamp_granularities[]': ['segment'] } : {}),
      },
      input.task,
    );
    const audio = await audioOf(input, invocation);
    const done = await transcribeAudio(deps, scope, {
      model,
      task: input.task,
      audio,
      request,
    });
    const answer = encodeTranscript(done.transcript, input.response_format, input.task, done.seconds);
    const content = answer.kind === 'json' ? JSON.stringify(answer.body) : answer.body;
    return {
      output: {
        model: done.model,
        text: done.transcript.text,
        seconds: done.seconds,
        response_format: input.response_format,
        content,
      },
      text: content,
    };
  },
});
