/**
 * `POST /v1/files` as `multipart/form-data`. openapi-typescript types the binary `file` field as a string,
 * so the typed body carries the filename there and `bodySerializer` builds the real form; openapi-fetch then
 * leaves `Content-Type` to fetch, which adds the multipart boundary.
 *
 * The file may be a Blob (browsers, small files), a path (Node: `fs.openAsBlob`, read from disk as it is
 * sent), or a stream (a Node `Readable`, a `ReadableStream`, any async iterable of bytes): a stream is sent as
 * a streamed multipart body, so a file of any size never sits in memory.
 */
import { multipartStream } from './multipart-stream.js';
import type { CallOptions, RawClient } from './raw-client.js';
import type { FileObject } from './types.js';
import { unwrap } from './unwrap.js';

export interface UploadFileInput {
  /** The bytes, a path on disk (Node only), or a stream of bytes. */
  file: Blob | string | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;
  /** The name stored with the file; for a path, defaults to the path's last segment. */
  filename?: string;
  /** Free text such as `assistants`, `vision`, `user_data`. */
  purpose: string;
  /** Seconds after creation at which the server deletes the file (3600 … 2592000). */
  expiresAfterSeconds?: number;
}

function fieldsOf(input: UploadFileInput): Record<string, string> {
  const fields: Record<string, string> = { purpose: input.purpose };
  if (input.expiresAfterSeconds !== undefined) {
    fields['expires_after[anchor]'] = 'created_at';
    fields['expires_after[seconds]'] = String(input.expiresAfterSeconds);
  }
  return fields;
}

export async function uploadFile(
  raw: RawClient,
  input: UploadFileInput,
  options: CallOptions = {},
): Promise<FileObject> {
  let file = input.file;
  let filename = input.filename;
  if (typeof file === 'string') {
    // Imported only here, so the client still loads in a browser.
    const { openAsBlob } = await import('node:fs');
    filename ??= file.split(/[\\/]/).pop();
    file = await openAsBlob(file);
  }
  const name = filename ?? 'file';
  const fields = fieldsOf(input);
  if (file instanceof Blob) {
    const form = new FormData();
    for (const [field, value] of Object.entries(fields)) {
      form.append(field, value);
    }
    form.append('file', file, name);
    return unwrap(
      await raw.POST('/v1/files', {
        body: { file: name, purpose: input.purpose },
        bodySerializer: () => form,
        signal: options.signal,
      }),
    );
  }
  const { body, contentType } = multipartStream(fields, { field: 'file', filename: name, data: file });
  return unwrap(
    await raw.POST('/v1/files', {
      body: { file: name, purpose: input.purpose },
      bodySerializer: () => body as never,
      headers: { 'Content-Type': contentType },
      signal: options.signal,
      // A stream as a request body: fetch requires half duplex (the answer is read after the body is sent).
      duplex: 'half',
    } as never),
  );
}
