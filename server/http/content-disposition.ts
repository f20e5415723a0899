/**
 * `Content-Disposition: attachment` for a stored file's name, per RFC 6266: a plain `filename="…"` that every
 * client reads (ASCII only, quotes and backslashes replaced) and `filename*=UTF-8''…` (RFC 8187/5987
 * percent-encoding) with the exact name for clients that know it. Control characters never reach the header,
 * so a name with CR/LF cannot add a header of its own.
 */

/** RFC 5987 `attr-char`: everything else is percent-encoded (encodeURIComponent leaves `'()*!` as they are). */
function encodeExtValue(text: string): string {
  return encodeURIComponent(text).replace(/['()*!]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
}

export function contentDisposition(filename: string): string {
  const clean = filename.replace(/[\u0000-\u001f\u007f]/g, '');
  const fallback = clean.replace(/[^\u0020-\u007e]|["\\%]/g, '_') || 'file';
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encodeExtValue(clean || 'file')}`;
}
