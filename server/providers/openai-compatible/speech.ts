/**
 * The `SpeechModel` of an OpenAI-compatible upstream: `POST <base>/audio/speech`
 * (https://platform.openai.com/docs/api-reference/audio/createSpeech). The answer is the audio itself, passed
 * on with the media type of the format asked for. Seconds for usage are read from the audio's headers
 * (`audio-duration.ts`); only audio that cannot be read is estimated from its size.
 */
import { UpstreamError } from '../../core/api-error.js';
import type { CallContext } from '../../core/call-context.js';
import type { SpeechCallOptions, SpeechFormat, SpeechModel } from '../../core/models.js';
import { AUDIO_MEDIA_TYPES } from '../../engines/audio/encode-audio.js';
import { audioSeconds, estimateAudioSeconds, sniffAudioFormat, type SniffedAudio } from '../upstream/audio-duration.js';
import type { UpstreamHttpClient } from '../upstream/http-client.js';
import { readAllBytes } from '../upstream/read-body.js';
import type { OpenAICompatibleConfig } from './http-client.js';

export interface OpenAICompatibleSpeechModelInput {
  config: OpenAICompatibleConfig;
  client: UpstreamHttpClient;
  modelId: string;
}

/** The container each format arrives in (opus comes in Ogg). */
const CONTAINERS: Record<SpeechFormat, SniffedAudio | 'pcm'> = {
  mp3: 'mp3',
  opus: 'ogg',
  aac: 'aac',
  flac: 'flac',
  wav: 'wav',
  pcm: 'pcm',
};

export function speechRequestBody(options: SpeechCallOptions, modelId: string): Record<string, unknown> {
  return {
    model: modelId,
    input: options.input,
    voice: options.voice,
    response_format: options.format,
    speed: options.speed,
    ...(options.instructions !== undefined ? { instructions: options.instructions } : {}),
  };
}

/** Our own settings OpenAI's API has no field for: dropped, with a warning, when they ask for a change. */
function warnUnsupported(options: SpeechCallOptions, context: CallContext, provider: string): void {
  const reason = `upstream ${provider} speaks OpenAI's speech API, which has no such setting`;
  if (options.volume !== 1) {
    context.warn({ field: 'volume', reason });
  }
  if (options.pitch !== 0) {
    context.warn({ field: 'pitch', reason });
  }
  if (options.language !== 'auto') {
    context.warn({ field: 'language', reason });
  }
}

/** Seconds of audio: read where the bytes allow, else estimated from the size (then usage is approximate). */
export function speechSeconds(bytes: Uint8Array, format: SpeechFormat): number {
  const expected = CONTAINERS[format];
  const container = expected === 'pcm' ? 'pcm' : (sniffAudioFormat(bytes) ?? expected);
  return audioSeconds(bytes, container) ?? estimateAudioSeconds(bytes.length, container);
}

export function createOpenAICompatibleSpeechModel(input: OpenAICompatibleSpeechModelInput): SpeechModel {
  const { config, client, modelId } = input;
  const provider = config.id;
  return {
    provider,
    modelId,
    async synthesize(options: SpeechCallOptions, context: CallContext) {
      warnUnsupported(options, context, provider);
      const response = await client.post({
        path: '/audio/speech',
        body: speechRequestBody(options, modelId),
        signal: context.signal,
        accept: `${AUDIO_MEDIA_TYPES[options.format]}, audio/*`,
      });
      const contentType = response.headers['content-type'] ?? '';
      const bytes = new Uint8Array(await readAllBytes(response.body));
      // A 200 with a JSON or HTML body is an error page, not audio.
      if (/^(application\/json|text\/)/i.test(contentType) || bytes.length === 0) {
        throw new UpstreamError(
          provider,
          502,
          response.status,
          `Upstream ${provider} answered a speech request with ${bytes.length === 0 ? 'no audio' : contentType} instead of audio`,
        );
      }
      return {
        audio: { data: bytes, mediaType: AUDIO_MEDIA_TYPES[options.format] },
        usage: { characters: [...options.input].length, seconds: speechSeconds(bytes, options.format) },
      };
    },
  };
}
