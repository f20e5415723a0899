/**
 * A caller's value as it may appear inside an error message or a log line: quoted and cut to a length that
 * identifies it, so a megabyte of `model` is not echoed back (and logged) as a megabyte.
 */
const MAX_QUOTED_CHARS = 80;

export function quoteValue(value: string, max = MAX_QUOTED_CHARS): string {
  return value.length <= max ? `'${value}'` : `'${value.slice(0, max)}…' (${value.length} characters)`;
}
