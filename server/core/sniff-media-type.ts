/**
 * The media type of stored bytes, recognised from the bytes themselves: a client's `Content-Type` is a claim,
 * and serving a claimed `text/html` that is really something else (or the reverse) is how stored-content
 * attacks start. Binary formats are named by their magic numbers in the first bytes; anything else is text only
 * when the whole file is valid UTF-8 without NUL bytes, and then the extension picks which kind of text.
 * `MediaSniffer` is fed the bytes as they stream past, so a file of any size is judged in constant memory.
 */
import { isUtf8 } from 'node:buffer';

/** How many leading bytes the magic numbers need (the longest check reads 12 bytes; ZIP office formats more). */
const HEAD_BYTES = 64;

export const OCTET_STREAM = 'application/octet-stream';

interface Magic {
  mediaType: string;
  test(head: Uint8Array): boolean;
}

const ascii = (head: Uint8Array, offset: number, text: string) =>
  [...text].every((char, index) => head[offset + index] === char.charCodeAt(0));
const bytesAt = (head: Uint8Array, offset: number, values: number[]) =>
  values.every((value, index) => head[offset + index] === value);

const MAGICS: Magic[] = [
  { mediaType: 'image/png', test: (head) => bytesAt(head, 0, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) },
  { mediaType: 'image/jpeg', test: (head) => bytesAt(head, 0, [0xff, 0xd8, 0xff]) },
  { mediaType: 'image/gif', test: (head) => ascii(head, 0, 'GIF87a') || ascii(head, 0, 'GIF89a') },
  { mediaType: 'image/webp', test: (head) => ascii(head, 0, 'RIFF') && ascii(head, 8, 'WEBP') },
  { mediaType: 'audio/wav', test: (head) => ascii(head, 0, 'RIFF') && ascii(head, 8, 'WAVE') },
  { mediaType: 'application/pdf', test: (head) => ascii(head, 0, '%PDF-') },
  {
    mediaType: 'application/zip',
    test: (head) => bytesAt(head, 0, [0x50, 0x4b, 0x03, 0x04]) || bytesAt(head, 0, [0x50, 0x4b, 0x05, 0x06]),
  },
  { mediaType: 'application/gzip', test: (head) => bytesAt(head, 0, [0x1f, 0x8b]) },
  {
    mediaType: 'audio/mpeg',
    test: (head) =>
      ascii(head, 0, 'ID3') || (head[0] === 0xff && ((head[1] ?? 0) & 0xe0) === 0xe0 && ((head[1] ?? 0) & 0x06) !== 0),
  },
  { mediaType: 'audio/flac', test: (head) => ascii(head, 0, 'fLaC') },
  { mediaType: 'audio/ogg', test: (head) => ascii(head, 0, 'OggS') },
  { mediaType: 'video/mp4', test: (head) => ascii(head, 4, 'ftyp') },
  { mediaType: 'video/webm', test: (head) => bytesAt(head, 0, [0x1a, 0x45, 0xdf, 0xa3]) },
];

/** A ZIP container is also each of these office formats; only the extension tells them apart without unzipping. */
const ZIP_EXTENSIONS: Record<string, string> = {
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  epub: 'application/epub+zip',
};

const TEXT_EXTENSIONS: Record<string, string> = {
  txt: 'text/plain',
  text: 'text/plain',
  log: 'text/plain',
  md: 'text/markdown',
  markdown: 'text/markdown',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  json: 'application/json',
  jsonl: 'application/jsonl',
  html: 'text/html',
  htm: 'text/html',
  xml: 'application/xml',
  yaml: 'application/yaml',
  yml: 'application/yaml',
};

function extensionOf(filename: string): string {
  const dot = filename.lastIndexOf('.');
  return dot < 0 ? '' : filename.slice(dot + 1).toLowerCase();
}

/**
 * How many bytes at the end of `chunk` begin a UTF-8 sequence that the chunk does not finish: they are held back
 * and judged with the next chunk, so a character split across two chunks is not taken for invalid.
 */
function unfinishedTail(chunk: Uint8Array): number {
  for (let back = 1; back <= Math.min(3, chunk.length); back++) {
    const byte = chunk[chunk.length - back]!; // back ≤ chunk.length
    if ((byte & 0xc0) !== 0x80) {
      const needs = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
      return needs > back ? back : 0;
    }
  }
  return 0;
}

export interface MediaSniffer {
  /** Feed the next bytes of the file, in order. */
  update(chunk: Uint8Array): void;
  /** The media type of everything fed, judged with the file's name for text kinds and ZIP-based formats. */
  result(filename: string): string;
}

export function createMediaSniffer(): MediaSniffer {
  let head = new Uint8Array(0);
  let text = true;
  let pending: Uint8Array = new Uint8Array(0);
  return {
    update(chunk) {
      if (head.length < HEAD_BYTES) {
        const joined = new Uint8Array(Math.min(HEAD_BYTES, head.length + chunk.length));
        joined.set(head);
        joined.set(chunk.subarray(0, joined.length - head.length), head.length);
        head = joined;
      }
      if (!text) {
        return;
      }
      const bytes = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
      const tail = unfinishedTail(bytes);
      const whole = bytes.subarray(0, bytes.length - tail);
      if (whole.includes(0) || !isUtf8(whole)) {
        text = false;
        return;
      }
      pending = Uint8Array.from(bytes.subarray(bytes.length - tail));
    },
    result(filename) {
      const magic = MAGICS.find((candidate) => candidate.test(head));
      const extension = extensionOf(filename);
      if (magic) {
        return magic.mediaType === 'application/zip' ? (ZIP_EXTENSIONS[extension] ?? magic.mediaType) : magic.mediaType;
      }
      if (text && pending.length === 0 && head.length > 0) {
        return TEXT_EXTENSIONS[extension] ?? 'text/plain';
      }
      return OCTET_STREAM;
    },
  };
}

/** The type of bytes held whole (tests, small inputs). */
export function sniffMediaType(bytes: Uint8Array, filename: string): string {
  const sniffer = createMediaSniffer();
  sniffer.update(bytes);
  return sniffer.result(filename);
}
