/**
 * An OpenAI-compatible upstream's transcription answer → a `Transcript`: the JSON of `json` and
 * `verbose_json` (OpenAI, whisper.cpp's server, faster-whisper servers, vLLM), and the `transcript.text.*`
 * events of a streamed one. Fields of a wrong type are left out rather than passed on; an answer without
 * `text` is the upstream's failure (502).
 */
import { UpstreamError } from '../../core/api-error.js';
import type {
  Transcript,
  TranscriptLogprob,
  TranscriptSegment,
  TranscriptSpeakerSegment,
  TranscriptTokens,
  TranscriptWord,
} from '../../core/models.js';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const num = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;
const int = (value: unknown): number | undefined => (Number.isInteger(value) ? (value as number) : undefined);

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

function words(value: unknown): TranscriptWord[] | undefined {
  if (!Array.isArray(value)) {
    return undefined;
  }
  return value.flatMap((item) =>
    isObject(item) && typeof item.word === 'string' && num(item.start) !== undefined && num(item.end) !== undefined
      ? [{ word: item.word, start: num(item.start)!, end: num(item.end)! }]
      : [],
  );
}

function segments(value: unknown): TranscriptSegment[] | undefined {
  if (!Array.isArray(value)) {
    return undefined;
  }
  return value.flatMap((item, index) => {
    if (
      !isObject(item) ||
      typeof item.text !== 'string' ||
      num(item.start) === undefined ||
      num(item.end) === undefined
    ) {
      return [];
    }
    const tokens =
      Array.isArray(item.tokens) && item.tokens.every(Number.isInteger) ? (item.tokens as number[]) : undefined;
    return [
      {
        id: int(item.id) ?? index,
        start: num(item.start)!,
        end: num(item.end)!,
        text: item.text,
        ...optional('seek', int(item.seek)),
        ...optional('tokens', tokens),
        ...optional('temperature', num(item.temperature)),
        ...optional('avgLogprob', num(item.avg_logprob)),
        ...optional('compressionRatio', num(item.compression_ratio)),
        ...optional('noSpeechProb', num(item.no_speech_prob)),
      },
    ];
  });
}

/** `diarized_json`'s segments: each with a `speaker` label and a string id. */
export function speakerSegments(value: unknown): TranscriptSpeakerSegment[] | undefined {
  if (!Array.isArray(value) || !value.some((item) => isObject(item) && typeof item.speaker === 'string')) {
    return undefined;
  }
  return value.flatMap((item, index) =>
    isObject(item) &&
    typeof item.speaker === 'string' &&
    typeof item.text === 'string' &&
    num(item.start) !== undefined &&
    num(item.end) !== undefined
      ? [
          {
            id: typeof item.id === 'string' || typeof item.id === 'number' ? String(item.id) : `seg_${index}`,
            speaker: item.speaker,
            start: num(item.start)!,
            end: num(item.end)!,
            text: item.text,
          },
        ]
      : [],
  );
}

export function decodeLogprobs(value: unknown): TranscriptLogprob[] | undefined {
  if (!Array.isArray(value)) {
    return undefined;
  }
  return value.flatMap((item) =>
    isObject(item) && typeof item.token === 'string' && num(item.logprob) !== undefined
      ? [
          {
            token: item.token,
            logprob: num(item.logprob)!,
            ...optional(
              'bytes',
              Array.isArray(item.bytes) && item.bytes.every(Number.isInteger) ? (item.bytes as number[]) : undefined,
            ),
          },
        ]
      : [],
  );
}

/** OpenAI's `usage` of type `tokens`; a `duration` usage is ignored (the seconds are measured here). */
export function decodeTranscriptTokens(value: unknown): TranscriptTokens | undefined {
  if (!isObject(value) || value.type === 'duration') {
    return undefined;
  }
  const input = int(value.input_tokens);
  const output = int(value.output_tokens);
  if (input === undefined || output === undefined) {
    return undefined;
  }
  const details = isObject(value.input_token_details) ? value.input_token_details : {};
  return {
    inputTokens: input,
    outputTokens: output,
    totalTokens: int(value.total_tokens) ?? input + output,
    ...optional('inputTextTokens', int(details.text_tokens)),
    ...optional('inputAudioTokens', int(details.audio_tokens)),
  };
}

export function decodeUpstreamTranscript(answer: unknown, provider: string, status: number): Transcript {
  if (!isObject(answer) || typeof answer.text !== 'string') {
    throw new UpstreamError(provider, 502, status, `Upstream ${provider} answered a transcription without its text`);
  }
  return {
    text: answer.text,
    ...optional('language', typeof answer.language === 'string' ? answer.language : undefined),
    ...optional('durationSeconds', num(answer.duration)),
    ...optional('words', words(answer.words)),
    // A diarized answer's segments are speakers' (string ids, no tokens), not verbose_json's.
    ...(speakerSegments(answer.segments)
      ? { speakerSegments: speakerSegments(answer.segments) }
      : optional('segments', segments(answer.segments))),
    ...optional('logprobs', decodeLogprobs(answer.logprobs)),
    ...optional('tokens', decodeTranscriptTokens(answer.usage)),
  };
}
