/**
 * `POST /v1/audio/transcriptions` and `/v1/audio/translations` as `multipart/form-data`, with arrays sent as
 * the OpenAI SDKs send them (`timestamp_granularities[]`, `include[]`, one field per value). `json`,
 * `verbose_json` and `diarized_json` answer the parsed object; `text`, `srt` and `vtt` the text. Streamed transcriptions are
 * reachable through `raw` with `stream: 'true'` and `parseSse`.
 */
import type { CallOptions, RawClient } from './raw-client.js';
import type { Schema } from './types.js';
import { unwrap } from './unwrap.js';

export type TranscriptionFormat = Schema<'TranscriptionFormat'>;

export interface TranscriptionInput<F extends TranscriptionFormat = TranscriptionFormat> {
  /** The audio (WAV, MP3, Ogg, FLAC, WebM, M4A, AAC). */
  file: Blob;
  filename?: string;
  model: string;
  /** ISO-639-1 (transcriptions only). */
  language?: string;
  prompt?: string;
  responseFormat?: F;
  temperature?: number;
  /** Transcriptions only: which timestamps `verbose_json` carries. */
  timestampGranularities?: Array<'word' | 'segment'>;
  /** Transcriptions only: `logprobs`. */
  include?: Array<'logprobs'>;
}

export type TranscriptionResult<F extends TranscriptionFormat> = F extends 'json' | 'verbose_json' | 'diarized_json'
  ? Schema<'TranscriptionResponse'>
  : string;

function formOf(input: TranscriptionInput, translate: boolean): FormData {
  const form = new FormData();
  form.append('file', input.file, input.filename ?? 'audio');
  form.append('model', input.model);
  const set = (name: string, value: string | number | undefined) => {
    if (value !== undefined) {
      form.append(name, String(value));
    }
  };
  set('prompt', input.prompt);
  set('response_format', input.responseFormat);
  set('temperature', input.temperature);
  if (!translate) {
    set('language', input.language);
    input.timestampGranularities?.forEach((value) => form.append('timestamp_granularities[]', value));
    input.include?.forEach((value) => form.append('include[]', value));
  }
  return form;
}

async function send<F extends TranscriptionFormat>(
  raw: RawClient,
  path: '/v1/audio/transcriptions' | '/v1/audio/translations',
  input: TranscriptionInput<F>,
  options: CallOptions,
): Promise<TranscriptionResult<F>> {
  const format = input.responseFormat ?? 'json';
  const text = format === 'text' || format === 'srt' || format === 'vtt';
  const form = formOf(input, path === '/v1/audio/translations');
  return unwrap(
    await raw.POST(path, {
      body: { file: input.filename ?? 'audio', model: input.model } as never,
      bodySerializer: () => form,
      parseAs: text ? 'text' : 'json',
      signal: options.signal,
    } as never),
  ) as TranscriptionResult<F>;
}

export function transcribeAudio<F extends TranscriptionFormat = 'json'>(
  raw: RawClient,
  input: TranscriptionInput<F>,
  options: CallOptions = {},
): Promise<TranscriptionResult<F>> {
  return send(raw, '/v1/audio/transcriptions', input, options);
}

export function translateAudio<F extends TranscriptionFormat = 'json'>(
  raw: RawClient,
  input: Omit<TranscriptionInput<F>, 'language' | 'timestampGranularities' | 'include'>,
  options: CallOptions = {},
): Promise<TranscriptionResult<F>> {
  return send(raw, '/v1/audio/translations', input, options);
}
