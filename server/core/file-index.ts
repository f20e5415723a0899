/**
 * What file storage tells the search index (and nothing more): a file's text becomes searchable after it is
 * stored, and stops being searchable when it is deleted. File storage calls these; the search capability
 * implements them. `add` runs off the request path and must not throw for content it cannot read (a binary
 * file is simply not indexed).
 */
import type { Readable } from 'node:stream';

export interface IndexableFile {
  id: string;
  keyId: string;
  filename: string;
  /** The sniffed media type. */
  mediaType: string;
  bytes: number;
  /** The stored bytes, read from the start. */
  open(): Readable;
}

export interface FileIndex {
  add(file: IndexableFile): Promise<void>;
  remove(fileId: string): void;
}
