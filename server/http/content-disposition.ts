/**
 * `Content-Disposition: attachment` for a stored file's name, per RFC 6266: a plain `filename="…"` that every
 * client reads (ASCII only, quotes and backslashes replaced) and `filename*=UTF-8''…` (RFC 8187/5987
 * percent-encoding) with the exact name for clients that know it. Control and format characters never reach
 * the header: a name with CR/LF cannot add a header of its own, and one with a bidi override (U+202E) cannot show
 * a different extension than it has (names stored before uploads were cleaned still pass through here).
 */
import { withoutControls } from './upload-filename.js';

/** RFC 5987 `attr-char`: everything else is percent-encoded (encodeURIComponent leaves `'()*!` as they are). */
function encodeExtValue(text: string): string {
  return encodeURIComponent(text).replace(/['()*!]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
}

export function contentDisposition(filename: string): string {
  const clean = withoutControls(filename);
  const fallback = clean.replace(/[^\u0020-\u007e]|["\\%]/g, '_') || 'file';
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encodeExtValue(clean || 'file')}`;
}
