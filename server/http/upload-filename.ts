/**
 * What is kept of the filename a client sends with a file part. Its last path segment only (`C:\tmp\a.pdf`,
 * `../../a.pdf` → `a.pdf`: the name is only ever shown, never used as a path), without control and format
 * characters. Those include the bidirectional overrides and isolates (U+202A–U+202E, U+2066–U+2069, U+200E/F):
 * `invoice\u202Efdp.exe` shows as `invoiceexe.pdf`, a name that lies about its type wherever it is displayed.
 * The zero-width (non-)joiners stay: scripts and emoji sequences need them.
 *
 * A name with nothing left (`.`, `..`, `/`, a bare override) is refused with a 400 that says so.
 */
import { ApiError } from '../core/api-error.js';

const MAX_FILENAME_CHARS = 255;

/** Cc (C0, DEL, C1) and Cf (format: bidi controls, zero-width space, BOM, soft hyphen…) except ZWNJ/ZWJ. */
const CONTROL_OR_FORMAT = /(?![\u200C\u200D])[\p{Cc}\p{Cf}]/gu;

/** `text` without control or format characters (for headers and names shown to people). */
export function withoutControls(text: string): string {
  return text.replace(CONTROL_OR_FORMAT, '');
}

/** The name to keep, or `undefined` when the client's name, reduced to its last segment, names nothing. */
function keptName(original: string): string | undefined {
  const segment = original.split(/[\\/]/).pop() ?? '';
  const clean = withoutControls(segment).trim();
  return clean === '' || clean === '.' || clean === '..' ? undefined : clean.slice(0, MAX_FILENAME_CHARS);
}

/** The refusal of a file part whose filename names no file, or `undefined` when it is usable (or absent). */
export function filenameRefusal(original: string | undefined): ApiError | undefined {
  if (original === undefined || original === '' || keptName(original) !== undefined) {
    return undefined;
  }
  const shown = JSON.stringify(withoutControls(original).slice(0, 100));
  return new ApiError(
    400,
    `The file part's filename ${shown} names no file once its path and control characters are removed (it is empty, "." or ".."). Send the file's own name, such as "report.pdf".`,
    { code: 'invalid_filename', param: 'file' },
  );
}

/** The name to store for an upload (`file` when the client sent none). */
export function uploadedFilename(original: string | undefined): string {
  return keptName(original ?? '') ?? 'file';
}
