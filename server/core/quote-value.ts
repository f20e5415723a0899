/**
 * A caller's value as it may appear inside an error message or a log line: quoted and cut to a length that
 * identifies it, so a megabyte of `model` is not echoed back (and logged) as a megabyte.
 */
const MAX_QUOTED_CHARS = 80;

/** `text` cut to `max` characters, an ellipsis marking the cut. */
export function cutText(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

export function quoteValue(value: string, max = MAX_QUOTED_CHARS): string {
  return value.length <= max ? `'${value}'` : `'${value.slice(0, max)}…' (${value.length} characters)`;
}
