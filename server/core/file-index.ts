/**
 * What file storage tells the search index (and nothing more): a file's text becomes searchable after it is
 * stored, and stops being searchable when it is deleted. File storage calls these; the search capability
 * implements them. `add` runs off the request path and must not throw for content it cannot read: it says why
 * the file is not indexed, and file storage records that on the file.
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
  open(): Promise<Readable>;
}

/** A file's text as the index reads it, or why there is none (`refused` is a stable code, `reason` a sentence). */
export type FileText = { text: string } | { refused: string; reason: string };

/** Whether a file's text is searchable, and why not (the contract's `FileIndexing`). */
export interface FileIndexState {
  status: 'indexing' | 'indexed' | 'failed' | 'not_indexed';
  /** Why `failed` or `not_indexed`, for a person. */
  reason?: string;
  /** The stable code of `reason`. */
  code?: string;
}

export interface FileIndex {
  /** What becomes of the file, decided without reading it: `indexing` when `add` will read it. */
  admit(file: Pick<IndexableFile, 'mediaType' | 'filename' | 'bytes'>): FileIndexState;
  /** Indexes an admitted file; resolves with its final state (never rejects). */
  add(file: IndexableFile): Promise<FileIndexState>;
  /** Resolves once the file's text is no longer searchable. */
  remove(fileId: string): Promise<void>;
  /**
   * The file's text, extracted exactly as `add` extracts it (PDF and HTML in a worker), without indexing it: the
   * `read_file` tool shows a model what search would find. Optional because file storage itself never reads
   * text; an index that cannot extract leaves it out.
   */
  text?(file: IndexableFile, signal: AbortSignal): Promise<FileText>;
}
