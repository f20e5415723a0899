/**
 * The text of a key's own stored file, for the `read_file` tool. Plain text, Markdown, CSV and JSON are read as
 * UTF-8 straight from the blob, only as far as the characters asked for (a 1 GB log costs one chunk). PDF and
 * HTML go through the search index's own extraction (`FileIndex.text`: the `extract-text` job, in a worker),
 * so a model reads exactly what search matched. Anything else is refused as not text: the bytes of an image
 * are no use to a language model.
 */
import type { Readable } from 'node:stream';
import { ApiError } from '../../core/api-error.js';
import type { FileIndex } from '../../core/file-index.js';
import { textKindOf } from '../../engines/text/text-kind.js';
import type { BlobStore } from '../../storage/blob-store.js';
import type { FileStore, StoredFile } from '../../storage/file-store.js';

export interface FileTextDeps {
  store: FileStore;
  blobs: BlobStore;
  /** The search index, whose extraction reads PDF and HTML; without it those files are refused. */
  index?: FileIndex;
}

export interface FileTextOutcome {
  file: StoredFile;
  text: string;
  /** The file holds more text than `maxChars`. */
  truncated: boolean;
}

function notText(file: StoredFile): ApiError {
  return new ApiError(
    422,
    `The file '${file.id}' (${file.filename}, ${file.mediaType}) is not text. read_file reads text, Markdown, CSV, JSON, HTML and PDF files.`,
    {
      code: 'file_not_text',
      param: 'file_id',
    },
  );
}

/** Cuts at `maxChars` without splitting a surrogate pair (an emoji would become an invalid half). */
function cut(text: string, maxChars: number): { text: string; truncated: boolean } {
  if (text.length <= maxChars) {
    return { text, truncated: false };
  }
  const end = /[\uD800-\uDBFF]/.test(text.charAt(maxChars - 1)) ? maxChars - 1 : maxChars;
  return { text: text.slice(0, end), truncated: true };
}

/** Strict UTF-8 up to `maxChars`; undefined for bytes that are not UTF-8 text (a NUL, an invalid sequence). */
async function readUtf8(stream: Readable, maxChars: number): Promise<{ text: string; truncated: boolean } | undefined> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let text = '';
  try {
    for await (const chunk of stream) {
      const bytes = chunk as Buffer;
      if (bytes.includes(0)) {
        return undefined;
      }
      text += decoder.decode(bytes, { stream: true });
      if (text.length > maxChars) {
        return cut(text, maxChars);
      }
    }
    text += decoder.decode();
  } catch (error) {
    // The fatal decoder throws a TypeError on invalid UTF-8; a read failure is a real error.
    if (error instanceof TypeError) {
      return undefined;
    }
    throw error;
  } finally {
    stream.destroy();
  }
  return cut(text, maxChars);
}

export async function readFileText(
  deps: FileTextDeps,
  keyId: string,
  id: string,
  options: { maxChars: number; nowSeconds: number; signal: AbortSignal },
): Promise<FileTextOutcome> {
  const file = await deps.store.get(id, keyId, options.nowSeconds);
  if (!file) {
    throw new ApiError(404, `No file '${id.slice(0, 128)}'. List yours with list_files (GET /v1/files).`, {
      param: 'file_id',
      code: 'file_not_found',
    });
  }
  const open = async (): Promise<Readable> => {
    const stream = await deps.blobs.open(file.blobId);
    if (!stream) {
      throw new ApiError(404, `The file '${file.id}' has no stored bytes (deleted meanwhile).`, {
        param: 'file_id',
        code: 'file_not_found',
      });
    }
    return stream;
  };
  const kind = textKindOf(file.mediaType, file.filename);
  if (!kind) {
    throw notText(file);
  }
  if (kind !== 'pdf' && kind !== 'html') {
    const read = await readUtf8(await open(), options.maxChars);
    if (!read) {
      throw notText(file);
    }
    return { file, ...read };
  }
  if (!deps.index?.text) {
    throw new ApiError(
      503,
      'This server has no text extraction for PDF and HTML files (the search index is not configured).',
      {
        code: 'capability_unavailable',
        retryable: false,
      },
    );
  }
  const extracted = await deps.index.text(
    { id: file.id, keyId: file.keyId, filename: file.filename, mediaType: file.mediaType, bytes: file.bytes, open },
    options.signal,
  );
  if ('refused' in extracted) {
    if (extracted.refused === 'too_large') {
      throw new ApiError(413, `The file '${file.id}' (${file.bytes} bytes) is larger than text extraction reads.`, {
        param: 'file_id',
        code: 'file_too_large',
      });
    }
    if (extracted.refused === 'not_text') {
      throw notText(file);
    }
    // A cap of extraction (pages, decompressed bytes, characters, time): the same refusal the file's `indexing` shows.
    throw new ApiError(422, `The text of '${file.id}' is not read: ${extracted.reason}`, {
      param: 'file_id',
      code: 'text_extraction_refused',
    });
  }
  return { file, ...cut(extracted.text, options.maxChars) };
}
