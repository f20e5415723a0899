/**
 * `POST /v1/files` as `multipart/form-data`. openapi-typescript types the binary `file` field as a string,
 * so the typed body carries the filename there and `bodySerializer` builds the real form with the Blob;
 * openapi-fetch then leaves `Content-Type` to fetch, which adds the multipart boundary.
 */
import type { CallOptions, RawClient } from './raw-client.js';
import type { FileObject } from './types.js';
import { unwrap } from './unwrap.js';

export interface UploadFileInput {
  file: Blob;
  filename: string;
  /** Free text such as `assistants`, `vision`, `user_data`. */
  purpose: string;
  /** Seconds after creation at which the server deletes the file (3600 … 2592000). */
  expiresAfterSeconds?: number;
}

export async function uploadFile(raw: RawClient, input: UploadFileInput, options: CallOptions = {}): Promise<FileObject> {
  const form = new FormData();
  form.append('file', input.file, input.filename);
  form.append('purpose', input.purpose);
  if (input.expiresAfterSeconds !== undefined) {
    form.append('expires_after[anchor]', 'created_at');
    form.append('expires_after[seconds]', String(input.expiresAfterSeconds));
  }
  return unwrap(
    await raw.POST('/v1/files', {
      body: { file: input.filename, purpose: input.purpose },
      bodySerializer: () => form,
      signal: options.signal,
    }),
  );
}
