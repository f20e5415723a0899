/**
 * A `multipart/form-data` body (RFC 7578) built as bytes, for upstream endpoints that take uploads (OpenAI's
 * `POST /videos` with an `input_reference` file). Built by hand rather than with `FormData` because the
 * client sends bytes through its own undici `Pool`, and the global `FormData` belongs to Node's bundled undici,
 * not the pinned one; a plain buffer also lets tests compare what was sent byte for byte.
 */
import { randomBytes } from 'node:crypto';

export type MultipartPart =
  | { name: string; value: string }
  | { name: string; filename: string; contentType: string; data: Uint8Array };

/** Quotes and line breaks would end the header value early; the names we send never hold them. */
function quoted(text: string): string {
  return `"${text.replace(/[\r\n"\\]/g, '_')}"`;
}

export function encodeMultipart(parts: readonly MultipartPart[]): { data: Uint8Array; contentType: string } {
  // Random, so no part's bytes (a prompt, an image) can contain it by chance or design.
  const boundary = `----omnigate-${randomBytes(16).toString('hex')}`;
  const pieces: Buffer[] = [];
  for (const part of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name=${quoted(part.name)}`;
    if ('data' in part) {
      head += `; filename=${quoted(part.filename)}\r\nContent-Type: ${part.contentType}`;
    }
    pieces.push(Buffer.from(`${head}\r\n\r\n`, 'utf8'));
    pieces.push('data' in part ? Buffer.from(part.data) : Buffer.from(part.value, 'utf8'));
    pieces.push(Buffer.from('\r\n', 'utf8'));
  }
  pieces.push(Buffer.from(`--${boundary}--\r\n`, 'utf8'));
  return { data: new Uint8Array(Buffer.concat(pieces)), contentType: `multipart/form-data; boundary=${boundary}` };
}
