/**
 * The `MusicModel` of an OpenAI-compatible upstream that offers music, as its provider's `music` setting
 * describes it (config.ts): the call's values go into the configured body fields, and the audio is read from
 * the answer as configured — the body itself, base64 text at a JSON pointer, or a URL at a JSON pointer that
 * is fetched through the SSRF guard. The format and length are read from the audio itself.
 */
import { UpstreamError } from '../../core/api-error.js';
import type { CallContext } from '../../core/call-context.js';
import type { MusicCallOptions, MusicFormat, MusicModel } from '../../core/models.js';
import { AUDIO_MEDIA_TYPES } from '../../engines/audio/encode-audio.js';
import { audioSeconds, sniffAudioFormat } from '../upstream/audio-duration.js';
import type { UpstreamHttpClient } from '../upstream/http-client.js';
import { readJsonPointer } from '../upstream/json-pointer.js';
import { readAllBytes } from '../upstream/read-body.js';
import type { SafeFetcher } from '../upstream/safe-fetch.js';
import { decodeBase64 } from '../../engines/body/large-base64.js';
import type { OpenAICompatibleConfig } from './http-client.js';

export type MusicSettings = NonNullable<OpenAICompatibleConfig['music']>;

export interface OpenAICompatibleMusicModelInput {
  config: OpenAICompatibleConfig;
  music: MusicSettings;
  client: UpstreamHttpClient;
  fetcher: SafeFetcher;
  modelId: string;
}

const MUSIC_CONTAINERS = new Set<string>(['mp3', 'wav', 'flac']);

export function musicRequestBody(
  options: MusicCallOptions,
  modelId: string,
  music: MusicSettings,
): Record<string, unknown> {
  const values: Record<keyof MusicSettings['fields'], unknown> = {
    model: modelId,
    prompt: options.prompt,
    lyrics: options.lyrics,
    instrumental: options.instrumental,
    duration: options.durationSeconds,
    seed: options.seed,
    format: options.format,
  };
  const body: Record<string, unknown> = { ...music.body };
  for (const [name, field] of Object.entries(music.fields) as Array<[keyof MusicSettings['fields'], string | false]>) {
    if (field !== false && values[name] !== undefined) {
      body[field] = values[name];
    }
  }
  return body;
}

export function createOpenAICompatibleMusicModel(input: OpenAICompatibleMusicModelInput): MusicModel {
  const { config, music, client, fetcher, modelId } = input;
  const provider = config.id;
  const malformed = (what: string) =>
    new UpstreamError(provider, 502, 200, `Upstream ${provider} answered a music generation with ${what}`);

  async function audioBytes(
    options: MusicCallOptions,
    context: CallContext,
  ): Promise<{ bytes: Uint8Array; answer?: unknown }> {
    const request = { path: music.path, body: musicRequestBody(options, modelId, music), signal: context.signal };
    if (music.answer === 'bytes') {
      const response = await client.post({ ...request, accept: `${AUDIO_MEDIA_TYPES[options.format]}, audio/*` });
      return { bytes: new Uint8Array(await readAllBytes(response.body)) };
    }
    const answer = await client.postJson(request);
    const value = readJsonPointer(answer, music.pointer!);
    if (typeof value !== 'string' || !value) {
      throw malformed(`no text at ${music.pointer}`);
    }
    if (music.answer === 'base64') {
      // Tolerates a data URL where bare base64 was expected.
      return { bytes: await decodeBase64(value.replace(/^data:[^,]*,/, ''), { signal: context.signal }), answer };
    }
    return { bytes: (await fetcher.fetch(value, context.signal)).bytes, answer };
  }

  return {
    provider,
    modelId,
    async compose(options: MusicCallOptions, context: CallContext) {
      const { bytes, answer } = await audioBytes(options, context);
      const format = sniffAudioFormat(bytes);
      if (!format || !MUSIC_CONTAINERS.has(format)) {
        throw malformed(
          format
            ? `${format} audio, which is not one of mp3, wav or flac`
            : 'bytes that are not mp3, wav or flac audio',
        );
      }
      if (format !== options.format) {
        context.warn({
          field: 'response_format',
          reason: `upstream ${provider} answered ${format} instead of ${options.format}`,
        });
      }
      const stated = music.duration_pointer ? readJsonPointer(answer, music.duration_pointer) : undefined;
      const durationSeconds =
        (typeof stated === 'number' && stated > 0 ? stated : audioSeconds(bytes, format)) ?? options.durationSeconds;
      return {
        audio: { data: bytes, mediaType: AUDIO_MEDIA_TYPES[format as MusicFormat] },
        durationSeconds,
        usage: { seconds: durationSeconds },
      };
    },
  };
}
