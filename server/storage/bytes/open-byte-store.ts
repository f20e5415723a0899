/** The byte store a configured blob location names (`OMNIGATE_BLOB_URL`, server/config.ts). */
import type { BlobLocation } from '../../config.js';
import type { ByteStore } from './byte-store.js';
import { createDirectoryByteStore } from './directory-byte-store.js';
import { createS3ByteStore } from './s3-byte-store.js';

export function openByteStore(location: BlobLocation): ByteStore {
  if (location.kind === 'directory') {
    return createDirectoryByteStore(location.directory);
  }
  return createS3ByteStore(location);
}
