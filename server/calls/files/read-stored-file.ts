/**
 * The bytes of a key's own stored file, for a call that takes a `file_id` as input (a video's reference image).
 * Input files are read whole, so they are capped: a file past `maxBytes` is refused rather than loaded.
 * `findStoredFile` checks the row only (no read of the bytes), so a caller can refuse at once and read later.
 */
import { buffer } from 'node:stream/consumers';
import { ApiError } from '../../core/api-error.js';
import type { BlobStore } from '../../storage/blob-store.js';
import type { FileStore } from '../../storage/file-store.js';

/** A stored file found by its row, its bytes not read yet. */
export interface FoundFile {
  mediaType: string;
  /** Undefined when the bytes are gone (deleted since the row was read). */
  read(): Promise<Uint8Array | undefined>;
}

export async function findStoredFile(
  deps: { store: FileStore; blobs: BlobStore },
  keyId: string,
  id: string,
  options: { maxBytes: number; param: string; nowSeconds: number },
): Promise<FoundFile | undefined> {
  const file = await deps.store.get(id, keyId, options.nowSeconds);
  if (!file) {
    return undefined;
  }
  if (file.bytes > options.maxBytes) {
    throw new ApiError(
      422,
      `The file ${id} is ${file.bytes} bytes; an input file may have at most ${options.maxBytes}.`,
      { param: options.param, code: 'file_too_large' },
    );
  }
  return {
    mediaType: file.mediaType,
    read: async () => {
      const stream = await deps.blobs.open(file.blobId);
      return stream ? new Uint8Array(await buffer(stream)) : undefined;
    },
  };
}
