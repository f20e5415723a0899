/**
 * The `TranscriptionModel` of an OpenAI-compatible upstream: the audio and the form fields go to
 * `POST <base>/audio/transcriptions` or `/audio/translations` as `multipart/form-data`, the way the OpenAI SDKs
 * send them (https://platform.openai.com/docs/api-reference/audio/createTranscription). The upstream is asked
 * for `json`, or `verbose_json` when the caller needs times (verbose answers and subtitles, which are written
 * here); with `stream` it may answer `transcript.text.*` events, and an upstream that ignores `stream` and
 * answers JSON is read as one delta.
 */
import { UpstreamError } from '../../core/api-error.js';
import type { CallContext } from '../../core/call-context.js';
import type {
  AudioContainer,
  Transcript,
  TranscriptionCallOptions,
  TranscriptionModel,
  TranscriptionStreamPart,
  TranscriptSpeakerSegment,
} from '../../core/models.js';
import {
  decodeLogprobs,
  decodeTranscriptTokens,
  decodeUpstreamTranscript,
  speakerSegments,
} from '../../formats/openai-audio/upstream-transcript.js';
import { encodeMultipart, type MultipartPart } from '../upstream/multipart.js';
import type { UpstreamHttpClient } from '../upstream/http-client.js';
import { readJsonBody } from '../upstream/read-body.js';
import type { OpenAICompatibleConfig } from './http-client.js';
import { readSseJson } from './read-sse-json.js';

export interface OpenAICompatibleTranscriptionModelInput {
  config: OpenAICompatibleConfig;
  client: UpstreamHttpClient;
  modelId: string;
}

/** The media type each container is sent with (the upstream may read the part's type or the file's extension). */
export const AUDIO_CONTAINER_TYPES: Record<AudioContainer, { mediaType: string; extension: string }> = {
  wav: { mediaType: 'audio/wav', extension: 'wav' },
  mp3: { mediaType: 'audio/mpeg', extension: 'mp3' },
  ogg: { mediaType: 'audio/ogg', extension: 'ogg' },
  flac: { mediaType: 'audio/flac', extension: 'flac' },
  webm: { mediaType: 'audio/webm', extension: 'webm' },
  mp4: { mediaType: 'audio/mp4', extension: 'm4a' },
  aac: { mediaType: 'audio/aac', extension: 'aac' },
};

/** The upstream answer asked for: JSON always (subtitles and text are written here from it). */
const UPSTREAM_FORMAT: Record<TranscriptionCallOptions['detail'], string> = {
  text: 'json',
  verbose: 'verbose_json',
  diarized: 'diarized_json',
};

/** The form the upstream gets: the file, the model, and only the fields the caller set. */
export function transcriptionParts(
  options: TranscriptionCallOptions,
  modelId: string,
  task: 'transcribe' | 'translate',
  stream: boolean,
): MultipartPart[] {
  const { container } = options.audio;
  const type = AUDIO_CONTAINER_TYPES[container];
  // The name keeps the caller's stem; its extension says the container the bytes really are (after conversion).
  const stem = options.audio.filename.replace(/\.[^./\\]*$/, '') || 'audio';
  const parts: MultipartPart[] = [
    { name: 'file', filename: `${stem}.${type.extension}`, contentType: type.mediaType, data: options.audio.data },
    { name: 'model', value: modelId },
    { name: 'response_format', value: UPSTREAM_FORMAT[options.detail] },
  ];
  if (task === 'transcribe' && options.language !== undefined) {
    parts.push({ name: 'language', value: options.language });
  }
  if (options.prompt !== undefined) {
    parts.push({ name: 'prompt', value: options.prompt });
  }
  if (options.temperature !== undefined) {
    parts.push({ name: 'temperature', value: String(options.temperature) });
  }
  if (task === 'transcribe') {
    if (options.detail === 'verbose') {
      options.granularities.forEach((value) => parts.push({ name: 'timestamp_granularities[]', value }));
    }
    options.include.forEach((value) => parts.push({ name: 'include[]', value }));
    parts.push(...options.passedFields);
    if (stream) {
      parts.push({ name: 'stream', value: 'true' });
    }
  }
  return parts;
}

export function createOpenAICompatibleTranscriptionModel(
  input: OpenAICompatibleTranscriptionModelInput,
): TranscriptionModel {
  const { config, client, modelId } = input;
  const provider = config.id;
  const accepted = config.transcription?.accepted_formats;

  function send(
    options: TranscriptionCallOptions,
    task: 'transcribe' | 'translate',
    stream: boolean,
    signal: AbortSignal,
  ) {
    return client.send({
      method: 'POST',
      path: task === 'transcribe' ? '/audio/transcriptions' : '/audio/translations',
      body: encodeMultipart(transcriptionParts(options, modelId, task, stream)),
      signal,
      accept: stream ? 'text/event-stream, application/json' : 'application/json',
    });
  }

  async function once(
    options: TranscriptionCallOptions,
    task: 'transcribe' | 'translate',
    context: CallContext,
  ): Promise<Transcript> {
    const response = await send(options, task, false, context.signal);
    return decodeUpstreamTranscript(await readJsonBody(provider, response), provider, response.status);
  }

  return {
    provider,
    modelId,
    ...(accepted ? { acceptedFormats: accepted } : {}),
    transcribe: (options, context) => once(options, 'transcribe', context),
    translate: (options, context) => once(options, 'translate', context),
    async *streamTranscription(options, context): AsyncGenerator<TranscriptionStreamPart> {
      const response = await send(options, 'transcribe', true, context.signal);
      if (!/^text\/event-stream/i.test(response.headers['content-type'] ?? '')) {
        // An upstream that does not stream (whisper-1 ignores `stream`) answers the whole transcript.
        const transcript = decodeUpstreamTranscript(await readJsonBody(provider, response), provider, response.status);
        if (transcript.speakerSegments && transcript.speakerSegments.length > 0) {
          // A diarized answer: each segment's text as its delta, then the segment, as a diarizing stream sends them.
          for (const segment of transcript.speakerSegments) {
            yield { type: 'text-delta', delta: segment.text, segmentId: segment.id };
            yield { type: 'segment', segment };
          }
        } else {
          yield { type: 'text-delta', delta: transcript.text };
        }
        yield { type: 'finish', transcript };
        return;
      }
      const segments: TranscriptSpeakerSegment[] = [];
      let text = '';
      for await (const event of readSseJson(response.body, provider)) {
        const data = (event ?? {}) as Record<string, unknown>;
        if ('error' in data) {
          const error = data.error as { message?: unknown } | string;
          const message = typeof error === 'string' ? error : String(error?.message ?? 'stream failed');
          throw new UpstreamError(provider, 502, response.status, `Upstream ${provider} failed mid-stream: ${message}`);
        }
        if (data.type === 'transcript.text.delta' && typeof data.delta === 'string') {
          text += data.delta;
          const logprobs = decodeLogprobs(data.logprobs);
          const segmentId =
            typeof data.segment_id === 'string' || typeof data.segment_id === 'number'
              ? String(data.segment_id)
              : undefined;
          yield {
            type: 'text-delta',
            delta: data.delta,
            ...(logprobs ? { logprobs } : {}),
            ...(segmentId !== undefined ? { segmentId } : {}),
          };
        } else if (data.type === 'transcript.text.segment') {
          // A diarizing model's finished segment (`diarized_json`); one without a speaker or times is dropped.
          const [segment] = speakerSegments([data]) ?? [];
          if (segment) {
            segments.push(segment);
            yield { type: 'segment', segment };
          }
        } else if (data.type === 'transcript.text.done') {
          const logprobs = decodeLogprobs(data.logprobs);
          const tokens = decodeTranscriptTokens(data.usage);
          yield {
            type: 'finish',
            transcript: {
              text: typeof data.text === 'string' ? data.text : text,
              ...(logprobs ? { logprobs } : {}),
              ...(tokens ? { tokens } : {}),
              ...(segments.length > 0 ? { speakerSegments: segments } : {}),
            },
          };
          return;
        }
      }
      // A stream that ends without `done` still finishes with what it said.
      yield { type: 'finish', transcript: { text, ...(segments.length > 0 ? { speakerSegments: segments } : {}) } };
    },
  };
}
