/**
 * A stored file as the contract shows it (`FileObject` of `/v1/files`): OpenAI's fields, and Omnigate's
 * `indexing` state (whether its text is searchable, and why not).
 */
import type { FileIndexState } from '../../core/file-index.js';
import type { components } from '../../../generated/api.js';

export type FileObject = components['schemas']['FileObject'];

/** What the object shows of a stored file (storage/file-store.ts `StoredFile` has these and more). */
export interface StoredFileView {
  id: string;
  filename: string;
  purpose: string;
  bytes: number;
  sha256: string;
  mediaType: string;
  createdAt: number;
  expiresAt: number | null;
  indexing?: FileIndexState;
}

export function fileObject(file: StoredFileView): FileObject {
  const indexing = file.indexing;
  return {
    id: file.id,
    object: 'file',
    bytes: file.bytes,
    created_at: file.createdAt,
    expires_at: file.expiresAt,
    filename: file.filename,
    purpose: file.purpose,
    // OpenAI's own sequence: `uploaded` until the file is processed; here, until its text is indexed or refused.
    status: indexing?.status === 'indexing' ? 'uploaded' : 'processed',
    status_details: null,
    content_type: file.mediaType,
    sha256: file.sha256,
    ...(indexing && {
      indexing: { status: indexing.status, reason: indexing.reason ?? null, code: indexing.code ?? null },
    }),
  };
}
