/**
 * A file's lifetime: the expiry a caller asks for at upload (`expires_after`), the removal of a file (row,
 * bytes and index entry) and the sweep of expired files, run after a create or a list, off the response.
 */
import type { Logger } from 'pino';
import { ApiError } from '../../core/api-error.js';
import type { FileIndex } from '../../core/file-index.js';
import type { BlobStore } from '../../storage/blob-store.js';
import type { FileStore, StoredFile } from '../../storage/file-store.js';

const MIN_EXPIRY_SECONDS = 3600;
const MAX_EXPIRY_SECONDS = 2_592_000;
/** Expired rows removed per sweep. */
const EXPIRED_SWEEP = 100;

/** The expiry (epoch seconds) an upload's form asks for, or null for none; 400 when it is malformed. */
export function expiryOf(body: Record<string, unknown>, created: number): number | null {
  // multer reads `expires_after[anchor]` as a nested object; a client may also send the flat names as JSON-like keys.
  const nested = (
    typeof body.expires_after === 'object' && body.expires_after !== null ? body.expires_after : {}
  ) as Record<string, unknown>;
  const anchor = nested.anchor ?? body['expires_after[anchor]'];
  const seconds = nested.seconds ?? body['expires_after[seconds]'];
  if (anchor === undefined && seconds === undefined) {
    return null;
  }
  if (anchor !== 'created_at') {
    throw new ApiError(400, "expires_after[anchor] must be 'created_at' (sent together with expires_after[seconds]).", {
      param: 'expires_after.anchor',
    });
  }
  const value = typeof seconds === 'string' && /^\d{1,10}$/.test(seconds) ? Number(seconds) : NaN;
  if (!Number.isInteger(value) || value < MIN_EXPIRY_SECONDS || value > MAX_EXPIRY_SECONDS) {
    throw new ApiError(
      400,
      `expires_after[seconds] must be an integer from ${MIN_EXPIRY_SECONDS} to ${MAX_EXPIRY_SECONDS}.`,
      { param: 'expires_after.seconds' },
    );
  }
  return created + value;
}

/** Deletes a file's bytes and index entry (its row is already gone). */
export async function removeFile(file: StoredFile, blobs: BlobStore, index: FileIndex | undefined): Promise<void> {
  await blobs.delete(file.blobId);
  await index?.remove(file.id);
}

/** A sweep of expired files, scheduled off the current response each time it is called. */
export function expiredFileSweep(deps: {
  store: FileStore;
  index?: FileIndex;
  blobs: BlobStore;
  logger: Logger;
  now: () => number;
}): () => void {
  return () => {
    setImmediate(async () => {
      let expired: StoredFile[];
      try {
        expired = await deps.store.takeExpired(Math.floor(deps.now() / 1000), EXPIRED_SWEEP);
      } catch (error) {
        deps.logger.error({ err: error }, 'finding expired files failed');
        return;
      }
      for (const file of expired) {
        removeFile(file, deps.blobs, deps.index).catch((error: unknown) =>
          deps.logger.error({ err: error, file: file.id }, 'deleting an expired file failed'),
        );
      }
    });
  };
}
