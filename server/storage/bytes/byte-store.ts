/**
 * Where the bytes of blobs live, apart from their rows: a directory (the default, inside the data directory, or
 * a volume the instances share) or S3-compatible object storage. The blob store (../blob-store.ts) keeps the
 * rows, ids, quotas and expiry; a byte store only keeps bytes under keys, so that the same blob store runs on
 * either, and instances that share a byte store (and a database) read each other's files and media.
 *
 * Keys are blob ids (`<prefix>_<base62>`), checked by `assertKey` before they reach a path or an object name.
 */
import type { Readable } from 'node:stream';

/** Inclusive byte offsets, as HTTP ranges are: `{ start: 0, end: 0 }` is the first byte. */
export interface ByteRange {
  start: number;
  end: number;
}

export interface ByteStore {
  /** Where the bytes are, for logs and messages: a path or `s3://bucket/prefix`, never a credential. */
  readonly location: string;
  /**
   * Streams `source` under `key`, never holding it whole. When the source fails, nothing is left under `key`
   * (a directory's temporary file is removed; an S3 multipart upload is aborted) and the source's error is
   * rethrown. Writing an existing key replaces it.
   */
  put(key: string, source: Readable | Uint8Array): Promise<void>;
  /**
   * Moves a local file under `key`: a rename when it lies on the same file system as a directory store (the
   * upload staged next to it), otherwise a streamed copy (an S3 upload). The local file is gone afterwards when
   * this resolves; when it rejects the caller removes it.
   */
  putFile(key: string, file: string): Promise<void>;
  /** The bytes under `key` (or the inclusive range of them); undefined when there is no such key. */
  open(key: string, range?: ByteRange): Promise<Readable | undefined>;
  /** Removes `key`; nothing happens when it does not exist. */
  delete(key: string): Promise<void>;
  /** Releases connections (the S3 client's sockets); the store is not used afterwards. */
  close(): void;
}

const KEY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/** Refuses a key that could name anything but one entry of the store (`..`, `/`, an empty name). */
export function assertKey(key: string): void {
  if (!KEY_PATTERN.test(key)) {
    throw new Error(`not a byte store key: ${JSON.stringify(key.slice(0, 140))}`);
  }
}
