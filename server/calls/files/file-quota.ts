/**
 * A key's file quota (bytes held and file count) and the limit of one upload, decided before its first byte is
 * read. `app.ts` hands `fileUploadLimit` to the upload storage; the create call checks the quota again when it
 * inserts the row (two uploads may race for the same room).
 */
import type { Request, Response } from 'express';
import { ApiError } from '../../core/api-error.js';
import type { FileIndex } from '../../core/file-index.js';
import type { StreamedLimit } from '../../http/upload-storage.js';
import type { FileStore } from '../../storage/file-store.js';
import { describeBytes } from '../storage-quota.js';

/** The blob-store prefix of uploaded files' bytes. */
export const FILE_BLOB_PREFIX = 'upload';

/** What the file calls need of the application: the store, its optional search index and the limits. */
export interface FileSettings {
  store: FileStore;
  index?: FileIndex;
  maxFileBytes: number;
  quotaBytes: number;
  quotaCount: number;
}

export function quotaBytesError(quota: number, held: number): ApiError {
  return new ApiError(
    413,
    `This file would take this key's stored files past its quota of ${describeBytes(quota)} (${describeBytes(held)} used). Delete files to make room.`,
    {
      code: 'file_quota_bytes_exceeded',
      param: 'file',
    },
  );
}

export function quotaCountError(quota: number): ApiError {
  return new ApiError(
    429,
    `This key already holds ${quota} files, its quota. Delete files (DELETE /v1/files/{id}) before uploading more.`,
    {
      code: 'file_quota_count_exceeded',
      retryable: false,
    },
  );
}

/**
 * The limit of one upload, decided before its first byte is read: the smaller of the upload limit and the room
 * left in the key's byte quota; a key already at its file count is refused at once.
 */
export function fileUploadLimit(deps: {
  files: FileSettings;
  now?: () => number;
}): (req: Request, res: Response) => Promise<StreamedLimit> {
  const now = deps.now ?? Date.now;
  return async (_req, res) => {
    const { maxFileBytes, quotaBytes, quotaCount } = deps.files;
    const key = res.locals.apiKey;
    if (!key) {
      throw new Error('an upload limit is asked only behind the key check');
    }
    const held = await deps.files.store.holdings(key.id, Math.floor(now() / 1000));
    if (held.count >= quotaCount) {
      throw quotaCountError(quotaCount);
    }
    const room = Math.max(0, quotaBytes - held.bytes);
    if (room < maxFileBytes) {
      return { maxBytes: room, tooLarge: () => quotaBytesError(quotaBytes, held.bytes) };
    }
    return {
      maxBytes: maxFileBytes,
      tooLarge: () =>
        new ApiError(
          413,
          `The file exceeds the upload limit of ${describeBytes(maxFileBytes)} (OMNIGATE_MAX_FILE_BYTES).`,
          { code: 'file_too_large', param: 'file' },
        ),
    };
  };
}
