/**
 * OpenAI's transcription and translation forms → `TranscriptionCallOptions` (all but the audio, which the call
 * checks first). The form parser (multer's append-field) reads `timestamp_granularities[]=word` as the array
 * `timestamp_granularities` and `chunking_strategy[type]=server_vad` as an object, so the contract cannot check
 * those by their wire names: the values are checked here, and a bad one is a 400 naming its field.
 */
import { ApiError } from '../../core/api-error.js';
import type { TranscriptionCallOptions } from '../../core/models.js';
import type { components } from '../../../generated/api.js';

export type TranscriptionFormat = components['schemas']['TranscriptionFormat'];

export interface DecodedTranscriptionRequest {
  options: Omit<TranscriptionCallOptions, 'audio'>;
  format: TranscriptionFormat;
  stream: boolean;
}

const GRANULARITIES = ['word', 'segment'] as const;
const INCLUDES = ['logprobs'] as const;
/** Fields passed to the upstream as sent: arrays repeat with `[]`, objects spread into `name[key]` fields. */
const PASSED_FIELDS = ['chunking_strategy', 'known_speaker_names', 'known_speaker_references'] as const;

type Form = Record<string, unknown>;

/** A form array, by its parsed name or its wire name (a client may send either); one value reads as one item. */
function formArray(form: Form, name: string): unknown[] {
  const value = form[name] ?? form[`${name}[]`];
  if (value === undefined) {
    return [];
  }
  return Array.isArray(value) ? value : [value];
}

function allowedValues<T extends string>(form: Form, name: string, allowed: readonly T[], max: number): T[] {
  const values = formArray(form, name);
  const bad = values.find((value) => typeof value !== 'string' || !(allowed as readonly string[]).includes(value));
  if (bad !== undefined || values.length > max) {
    throw new ApiError(
      400,
      values.length > max
        ? `${name}[] takes at most ${max} values.`
        : `${name}[] takes ${allowed.map((value) => `'${value}'`).join(' or ')}; got ${JSON.stringify(bad)}.`,
      { code: 'invalid_value', param: `${name}[]` },
    );
  }
  return [...new Set(values as T[])];
}

function passedFields(form: Form): Array<{ name: string; value: string }> {
  const fields: Array<{ name: string; value: string }> = [];
  for (const name of PASSED_FIELDS) {
    const value = form[name] ?? form[`${name}[]`];
    if (value === undefined || value === null) {
      continue;
    }
    if (Array.isArray(value)) {
      value.forEach((item) => fields.push({ name: `${name}[]`, value: String(item) }));
    } else if (typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) {
        fields.push({ name: `${name}[${key}]`, value: String(item) });
      }
    } else {
      fields.push({ name, value: String(value) });
    }
  }
  return fields;
}

export function decodeTranscriptionRequest(
  body: components['schemas']['TranscriptionRequest'] | components['schemas']['TranslationRequest'],
  task: 'transcribe' | 'translate',
): DecodedTranscriptionRequest {
  const form = body as unknown as Form;
  const format = body.response_format ?? 'json';
  const transcribing = task === 'transcribe';
  const granularities = transcribing ? allowedValues(form, 'timestamp_granularities', GRANULARITIES, 2) : [];
  const include = transcribing ? allowedValues(form, 'include', INCLUDES, 8) : [];
  const stream = transcribing && (form.stream === true || form.stream === 'true');
  const language = transcribing ? (form.language as string | undefined) : undefined;
  if (format === 'diarized_json' && !transcribing) {
    throw new ApiError(400, "response_format 'diarized_json' is for transcriptions; a translation has no speakers.", {
      code: 'invalid_value',
      param: 'response_format',
    });
  }
  return {
    format,
    stream,
    options: {
      ...(language !== undefined ? { language } : {}),
      ...(body.prompt !== undefined ? { prompt: body.prompt } : {}),
      ...(body.temperature !== undefined ? { temperature: Number(body.temperature) } : {}),
      // Subtitles are written from segments: the model is asked for them whenever the answer needs times.
      detail:
        format === 'diarized_json'
          ? 'diarized'
          : format === 'verbose_json' || format === 'srt' || format === 'vtt'
            ? 'verbose'
            : 'text',
      granularities:
        format === 'srt' || format === 'vtt' ? [...new Set([...granularities, 'segment' as const])] : granularities,
      include,
      passedFields: transcribing ? passedFields(form) : [],
    },
  };
}
