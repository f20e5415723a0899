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

/** A file's text as the index reads it, or why there is none. */
export type FileText = { text: string } | { refused: 'not_text' | 'too_large' };

export interface FileIndex {
  add(file: IndexableFile): Promise<void>;
  remove(fileId: string): void;
  /**
   * The file's text, extracted exactly as `add` extracts it (PDF and HTML in a worker), without indexing it: the
   * `read_file` tool shows a model what search would find. Optional because file storage itself never reads
   * text; an index that cannot extract leaves it out.
   */
  text?(file: IndexableFile, signal: AbortSignal): Promise<FileText>;
}
