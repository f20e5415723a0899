/**
 * SubRip (`srt`) and WebVTT (`vtt`) subtitles from a transcript's segments, as OpenAI writes them: numbered
 * cues, `HH:MM:SS,mmm` (SRT) or `HH:MM:SS.mmm` (VTT) times. A transcript without segments (a model that gives
 * no times) becomes one cue over its whole duration, so the file is still valid.
 */
import type { Transcript, TranscriptSegment } from '../../core/models.js';

function clock(seconds: number, separator: ',' | '.'): string {
  const totalMs = Math.max(0, Math.round(seconds * 1000));
  const hours = Math.floor(totalMs / 3_600_000);
  const minutes = Math.floor((totalMs % 3_600_000) / 60_000);
  const secs = Math.floor((totalMs % 60_000) / 1000);
  const ms = totalMs % 1000;
  const two = (value: number) => String(value).padStart(2, '0');
  return `${two(hours)}:${two(minutes)}:${two(secs)}${separator}${String(ms).padStart(3, '0')}`;
}

function cues(transcript: Transcript): TranscriptSegment[] {
  if (transcript.segments && transcript.segments.length > 0) {
    return transcript.segments;
  }
  return [{ id: 0, start: 0, end: transcript.durationSeconds ?? 0, text: transcript.text }];
}

/** Cue text: a blank line would end the cue early, so line breaks inside a segment become spaces. */
function cueText(text: string): string {
  return text.trim().replace(/\s*\n\s*/g, ' ');
}

export function encodeSrt(transcript: Transcript): string {
  return cues(transcript)
    .map(
      (segment, index) =>
        `${index + 1}\n${clock(segment.start, ',')} --> ${clock(segment.end, ',')}\n${cueText(segment.text)}\n`,
    )
    .join('\n');
}

export function encodeVtt(transcript: Transcript): string {
  const body = cues(transcript)
    .map((segment) => `${clock(segment.start, '.')} --> ${clock(segment.end, '.')}\n${cueText(segment.text)}\n`)
    .join('\n');
  return `WEBVTT\n\n${body}`;
}
