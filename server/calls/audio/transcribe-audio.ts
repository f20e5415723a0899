/**
 * One transcription or translation, as `POST /v1/audio/transcriptions` and `/v1/audio/translations` run it and
 * the `transcribe_audio` tool too: resolve the model (503 `capability_unavailable` when none is configured:
 * there is no built-in one), then check the audio before any upstream sees it — its size, its container from
 * the bytes, that it decodes and how long it is (ffmpeg, a child process under the media pool's slot and the
 * key's turn, like every other media job) — convert it when the model takes other containers, and record
 * the seconds of audio as the call's media units.
 */
import { ApiError } from '../../core/api-error.js';
import { DEFAULT_TRANSCRIPTION_SETTINGS, type TranscriptionSettings } from '../../config.js';
import type { Transcript, TranscriptionCallOptions } from '../../core/models.js';
import { ffmpegPath } from '../../engines/audio/ffmpeg-process.js';
import { convertAudio, probeAudioDuration } from '../../engines/audio/probe-audio-duration.js';
import { sniffAudioContainer } from '../../engines/audio/sniff-audio-container.js';
import type { MediaPool } from '../../engines/media-pool.js';
import type { DecodedTranscriptionRequest } from '../../formats/openai-audio/transcription-request.js';
import type { CallScope } from '../../http/call-scope.js';
import { prepareCall, type CallDeps, type PreparedCall } from '../prepare-call.js';

export { DEFAULT_TRANSCRIPTION_SETTINGS, type TranscriptionSettings };

export interface TranscriptionDeps extends CallDeps {
  mediaPool: MediaPool;
  transcription?: TranscriptionSettings;
}

export interface TranscriptionInput {
  model: string;
  task: 'transcribe' | 'translate';
  audio: { data: Uint8Array; filename: string };
  request: DecodedTranscriptionRequest;
}

export interface PreparedTranscription {
  call: PreparedCall<'transcription'>;
  options: TranscriptionCallOptions;
  /** Seconds of audio, as decoded here. */
  seconds: number;
}

const CONFIGURE =
  'add a model of type transcription on an OpenAI-compatible provider to the configuration (for example ' +
  '`{provider: openai, model: whisper-1, type: transcription}`), or name one as provider:model (`openai:whisper-1`)';

/** The model, or 503 `capability_unavailable` when the configuration has no transcription model to offer. */
function resolveTranscriptionModel(deps: CallDeps, scope: CallScope, model: string): PreparedCall<'transcription'> {
  try {
    return prepareCall(deps, scope, model, 'transcription');
  } catch (error) {
    const unresolved =
      error instanceof ApiError && (error.code === 'model_not_found' || error.code === 'wrong_model_type');
    if (unresolved && !deps.registry.list().some((entry) => entry.type === 'transcription')) {
      throw new ApiError(
        503,
        `Speech-to-text needs an upstream: this server has no built-in transcription model and none is configured; ${CONFIGURE}.`,
        { code: 'capability_unavailable', param: 'model', retryable: false, expected: true },
      );
    }
    throw error;
  }
}

function invalidAudio(message: string): ApiError {
  return new ApiError(400, message, { code: 'invalid_audio', param: 'file' });
}

export async function prepareTranscription(
  deps: TranscriptionDeps,
  scope: CallScope,
  input: TranscriptionInput,
): Promise<PreparedTranscription> {
  const settings = deps.transcription ?? DEFAULT_TRANSCRIPTION_SETTINGS;
  const call = resolveTranscriptionModel(deps, scope, input.model);
  const { data } = input.audio;
  if (data.length > settings.maxBytes) {
    throw new ApiError(
      413,
      `The audio file is ${data.length} bytes; the limit is ${settings.maxBytes} (OMNIGATE_TRANSCRIPTION_MAX_BYTES).`,
      { code: 'file_too_large', param: 'file' },
    );
  }
  const container = sniffAudioContainer(data);
  if (!container) {
    throw invalidAudio(
      'The file is not audio in a container this server recognises (WAV, MP3, Ogg, FLAC, WebM, MP4/M4A or AAC).',
    );
  }
  const ffmpeg = ffmpegPath();
  if (!ffmpeg) {
    throw new ApiError(503, 'Speech-to-text needs ffmpeg, which this platform has no binary for.', {
      code: 'capability_unavailable',
      retryable: false,
    });
  }
  const accepted = call.model.acceptedFormats;
  const target = accepted && !accepted.includes(container) ? accepted[0]! : container;
  const { seconds, audio } = await deps.mediaPool.use(
    call.context.signal,
    async (slot) => {
      const probe = await probeAudioDuration(ffmpeg, data, container, settings.maxSeconds, slot.signal);
      if ('undecodable' in probe) {
        throw invalidAudio(`The ${container} file does not decode as audio: ${probe.undecodable}.`);
      }
      if (probe.tooLong) {
        throw new ApiError(
          400,
          `The audio is longer than ${settings.maxSeconds} seconds, the limit of this server (OMNIGATE_TRANSCRIPTION_MAX_SECONDS).`,
          { code: 'audio_too_long', param: 'file' },
        );
      }
      const converted = target === container ? data : await convertAudio(ffmpeg, data, container, target, slot.signal);
      return { seconds: Math.round(probe.seconds * 1000) / 1000, audio: converted };
    },
    { owner: call.context.owner },
  );
  return {
    call,
    seconds,
    options: { ...input.request.options, audio: { data: audio, container: target, filename: input.audio.filename } },
  };
}

/** Records the call's seconds (media units) and the upstream's tokens, when it counted them. */
export function recordTranscription(prepared: PreparedTranscription, transcript: Transcript): void {
  const record = prepared.call.call;
  record.units = prepared.seconds;
  record.media = { seconds: prepared.seconds };
  if (transcript.tokens) {
    record.usage = { inputTokens: transcript.tokens.inputTokens, outputTokens: transcript.tokens.outputTokens };
  }
}

/** A whole transcription (not streamed): prepare, call the model, record. */
export async function transcribeAudio(
  deps: TranscriptionDeps,
  scope: CallScope,
  input: TranscriptionInput,
): Promise<{ transcript: Transcript; seconds: number; model: string }> {
  const prepared = await prepareTranscription(deps, scope, input);
  const { model, context } = prepared.call;
  const transcript =
    input.task === 'translate'
      ? await model.translate(prepared.options, context)
      : await model.transcribe(prepared.options, context);
  recordTranscription(prepared, transcript);
  return { transcript, seconds: prepared.seconds, model: prepared.call.resolved.entry.id };
}
