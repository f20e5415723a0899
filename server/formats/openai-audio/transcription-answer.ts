/**
 * A transcript → OpenAI's answer shapes: `json` and `verbose_json` objects, `text`, `srt` and `vtt` text, and
 * the `transcript.text.delta`/`transcript.text.segment`/`transcript.text.done` stream events. Used by the routes and by the
 * `transcribe_audio` tool alike. `usage` is the upstream's token counts when it gave them, otherwise the seconds
 * of audio measured here.
 */
import type { Transcript, TranscriptionStreamPart, TranscriptLogprob } from '../../core/models.js';
import type { components } from '../../../generated/api.js';
import { encodeSrt, encodeVtt } from './subtitles.js';
import type { TranscriptionFormat } from './transcription-request.js';

type Schemas = components['schemas'];
export type TranscriptionUsageWire = Schemas['TranscriptionUsage'];
export type TranscriptionEvent = Schemas['TranscriptionStreamEvent'];

export function transcriptionUsage(transcript: Transcript, seconds: number): TranscriptionUsageWire {
  const tokens = transcript.tokens;
  if (!tokens) {
    return { type: 'duration', seconds };
  }
  const details =
    tokens.inputTextTokens !== undefined || tokens.inputAudioTokens !== undefined
      ? {
          input_token_details: {
            ...(tokens.inputTextTokens !== undefined ? { text_tokens: tokens.inputTextTokens } : {}),
            ...(tokens.inputAudioTokens !== undefined ? { audio_tokens: tokens.inputAudioTokens } : {}),
          },
        }
      : {};
  return {
    type: 'tokens',
    input_tokens: tokens.inputTokens,
    output_tokens: tokens.outputTokens,
    total_tokens: tokens.totalTokens,
    ...details,
  };
}

function logprobs(values: TranscriptLogprob[] | undefined): { logprobs?: Schemas['TranscriptionLogprob'][] } {
  return values
    ? { logprobs: values.map(({ token, logprob, bytes }) => ({ token, logprob, ...(bytes ? { bytes } : {}) })) }
    : {};
}

export function encodeTranscriptionJson(transcript: Transcript, seconds: number): Schemas['TranscriptionJson'] {
  return { text: transcript.text, ...logprobs(transcript.logprobs), usage: transcriptionUsage(transcript, seconds) };
}

export function encodeTranscriptionVerbose(
  transcript: Transcript,
  task: 'transcribe' | 'translate',
  seconds: number,
): Schemas['TranscriptionVerbose'] {
  return {
    task,
    language: transcript.language ?? (task === 'translate' ? 'english' : 'unknown'),
    duration: transcript.durationSeconds ?? seconds,
    text: transcript.text,
    ...(transcript.words ? { words: transcript.words.map(({ word, start, end }) => ({ word, start, end })) } : {}),
    ...(transcript.segments
      ? {
          segments: transcript.segments.map((segment) => ({
            id: segment.id,
            ...(segment.seek !== undefined ? { seek: segment.seek } : {}),
            start: segment.start,
            end: segment.end,
            text: segment.text,
            ...(segment.tokens ? { tokens: segment.tokens } : {}),
            ...(segment.temperature !== undefined ? { temperature: segment.temperature } : {}),
            ...(segment.avgLogprob !== undefined ? { avg_logprob: segment.avgLogprob } : {}),
            ...(segment.compressionRatio !== undefined ? { compression_ratio: segment.compressionRatio } : {}),
            ...(segment.noSpeechProb !== undefined ? { no_speech_prob: segment.noSpeechProb } : {}),
          })),
        }
      : {}),
    usage: transcriptionUsage(transcript, seconds),
  };
}

/** OpenAI's `diarized_json`: the text and its segments labelled by speaker. */
export function encodeTranscriptionDiarized(transcript: Transcript, seconds: number): Schemas['TranscriptionDiarized'] {
  return {
    task: 'transcribe',
    duration: transcript.durationSeconds ?? seconds,
    text: transcript.text,
    segments: (transcript.speakerSegments ?? []).map(({ id, speaker, start, end, text }) => ({
      type: 'transcript.text.segment' as const,
      id,
      start,
      end,
      text,
      speaker,
    })),
    usage: transcriptionUsage(transcript, seconds),
  };
}

export type EncodedTranscript =
  | {
      kind: 'json';
      body: Schemas['TranscriptionJson'] | Schemas['TranscriptionVerbose'] | Schemas['TranscriptionDiarized'];
    }
  | { kind: 'text'; body: string };

/** The answer for `format`: an object for `json`/`verbose_json`, text (with OpenAI's final newline) otherwise. */
export function encodeTranscript(
  transcript: Transcript,
  format: TranscriptionFormat,
  task: 'transcribe' | 'translate',
  seconds: number,
): EncodedTranscript {
  switch (format) {
    case 'json':
      return { kind: 'json', body: encodeTranscriptionJson(transcript, seconds) };
    case 'verbose_json':
      return { kind: 'json', body: encodeTranscriptionVerbose(transcript, task, seconds) };
    case 'diarized_json':
      return { kind: 'json', body: encodeTranscriptionDiarized(transcript, seconds) };
    case 'text':
      return { kind: 'text', body: `${transcript.text}\n` };
    case 'srt':
      return { kind: 'text', body: encodeSrt(transcript) };
    case 'vtt':
      return { kind: 'text', body: encodeVtt(transcript) };
  }
}

/** One stream part as its event; `seconds` goes into the `done` event's usage. */
export function encodeTranscriptionEvent(part: TranscriptionStreamPart, seconds: number): TranscriptionEvent {
  if (part.type === 'text-delta') {
    return {
      type: 'transcript.text.delta',
      delta: part.delta,
      ...logprobs(part.logprobs),
      ...(part.segmentId !== undefined ? { segment_id: part.segmentId } : {}),
    };
  }
  if (part.type === 'segment') {
    const { id, start, end, text, speaker } = part.segment;
    return { type: 'transcript.text.segment', id, start, end, text, speaker };
  }
  return {
    type: 'transcript.text.done',
    text: part.transcript.text,
    ...logprobs(part.transcript.logprobs),
    usage: transcriptionUsage(part.transcript, seconds),
  };
}
