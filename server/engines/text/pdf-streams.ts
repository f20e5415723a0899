/**
 * How many bytes a PDF's compressed streams inflate to, measured before pdf.js sees the file: pdf.js decodes a
 * stream whole into one growing buffer, an ArrayBuffer outside the V8 heap that a worker's heap limit does not
 * bound, so a 1 MB FlateDecode content stream that inflates to 400 MB costs the process about 1 GB. Here every
 * stream is inflated through zlib and its output counted and dropped, so measuring costs a few KiB however much
 * the streams hold, and it stops at the first byte past the limit.
 *
 * Every stream of a PDF lies in the file as `stream … endstream` (a stream cannot sit inside an object stream),
 * so scanning for the keyword finds them all, including a content stream that calls itself an image. A chain of
 * FlateDecode filters is inflated layer by layer. What cannot be measured is reported: streams of an encrypted
 * file (their bytes are ciphertext until pdf.js decrypts them) and streams whose filter chain holds an
 * expanding filter zlib cannot undo (LZWDecode, RunLengthDecode, or Flate after ASCII85/ASCIIHex).
 */
import { constants, createInflate, type Inflate } from 'node:zlib';

export interface StreamMeasure {
  /** Decompressed bytes counted, up to the first byte past `limit`. */
  bytes: number;
  /** True when the count went past `limit` (the measure stopped there). */
  over: boolean;
  /** The file has an `/Encrypt` dictionary: its streams were counted as stored, not as inflated. */
  encrypted: boolean;
  /** Streams whose filter chain could not be measured (see above), counted at their stored size. */
  unmeasured: number;
}

const STREAM = Buffer.from('stream');
const ENDSTREAM = Buffer.from('endstream');
/** How far back from `stream` a stream's dictionary is looked for. */
const DICTIONARY_WINDOW = 4096;
const FLATE = new Set(['FlateDecode', 'Fl']);
/** White space of PDF (NUL, tab, LF, FF, CR, space). */
const WHITE_SPACE = new Set([0x00, 0x09, 0x0a, 0x0c, 0x0d, 0x20]);
/** What may precede a keyword: white space, a delimiter, or a comment's line end. */
const TOKEN_BOUNDARY = new Set([...WHITE_SPACE, ...Buffer.from('()<>[]{}/%')]);
const EXPANDING = new Set(['LZWDecode', 'LZW', 'RunLengthDecode', 'RL']);

function filtersOf(dictionary: string): string[] {
  const match = /\/Filter\s*(\[[^\]]*\]|\/[A-Za-z0-9]+)/.exec(dictionary);
  // Both groups are mandatory.
  return match ? [...match[1]!.matchAll(/\/([A-Za-z0-9]+)/g)].map((name) => name[1]!) : [];
}

/** Inflates `data` through `layers` chained zlib inflaters, calling `count` with each final chunk's size; false stops. */
function inflateThrough(data: Uint8Array, layers: number, count: (size: number) => boolean): Promise<void> {
  // Sync flush on end: a truncated or damaged stream yields what precedes the damage, as pdf.js reads it.
  const inflaters: Inflate[] = Array.from({ length: layers }, () =>
    createInflate({ finishFlush: constants.Z_SYNC_FLUSH }),
  );
  // layers ≥ 1: the caller counts a stream without a leading Flate layer as stored.
  for (let index = 0; index + 1 < inflaters.length; index += 1) {
    inflaters[index]!.pipe(inflaters[index + 1]!);
  }
  const last = inflaters[inflaters.length - 1]!;
  return new Promise((resolve) => {
    const stop = () => {
      for (const inflater of inflaters) {
        inflater.destroy();
      }
      resolve();
    };
    last.on('data', (chunk: Buffer) => {
      if (!count(chunk.length)) {
        stop();
      }
    });
    last.on('end', resolve);
    // A damaged stream ends the count where the damage is; pdf.js stops decoding it there too.
    for (const inflater of inflaters) {
      inflater.on('error', stop);
    }
    inflaters[0]!.end(data);
  });
}

/** Counts the decompressed bytes of every stream in `pdf`, stopping past `limit`. */
export async function measurePdfStreams(
  pdf: Uint8Array,
  limit: number,
  deadline: () => boolean = () => false,
): Promise<StreamMeasure> {
  const file = Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength);
  const encrypted = /\/Encrypt\s*(\d+\s+\d+\s+R|<<)/.test(file.toString('latin1', Math.max(0, file.length - 65_536)));
  const measure: StreamMeasure = { bytes: 0, over: false, encrypted, unmeasured: 0 };
  const add = (size: number) => {
    measure.bytes += size;
    measure.over = measure.bytes > limit;
    return !measure.over;
  };
  let at = 0;
  while (!measure.over && !deadline()) {
    const keyword = file.indexOf(STREAM, at);
    if (keyword < 0) {
      break;
    }
    at = keyword + STREAM.length;
    // A keyword, as pdf.js's lexer sees one: not part of a longer token (`endstream`, a name like `/Headstream`),
    // followed by white space; pdf.js then skips to the next line. The scan goes on right after the keyword, never
    // past the data, so no false match (or `endstream` bytes planted in the data) can hide a stream from it.
    const previous = keyword > 0 ? file[keyword - 1]! : 0x0a;
    if (!TOKEN_BOUNDARY.has(previous) || !WHITE_SPACE.has(file[at] ?? 0)) {
      continue;
    }
    // pdf.js's `skipToNextLine`: past the first CR, LF or CRLF after the keyword.
    let start = at;
    while (start < file.length && file[start] !== 0x0a && file[start] !== 0x0d) {
      start += 1;
    }
    start += file[start] === 0x0d && file[start + 1] === 0x0a ? 2 : 1;
    // zlib stops at the end of its own stream, so the data runs to the end of the file; /Length is not trusted.
    const data = file.subarray(start);
    const ends = file.indexOf(ENDSTREAM, start);
    const stored = (ends < 0 ? file.length : ends) - start;
    const dictionaryStart = Math.max(0, keyword - DICTIONARY_WINDOW);
    const dictionary = file.toString('latin1', dictionaryStart, keyword);
    const filters = filtersOf(dictionary.slice(dictionary.lastIndexOf('obj') + 1));
    const flateLayers = filters.findIndex((name) => !FLATE.has(name));
    const leadingFlate = flateLayers < 0 ? filters.length : flateLayers;
    if (encrypted || leadingFlate === 0) {
      if (!encrypted && filters.some((name) => EXPANDING.has(name) || FLATE.has(name))) {
        measure.unmeasured += 1;
      }
      add(stored);
      continue;
    }
    if (filters.slice(leadingFlate).some((name) => EXPANDING.has(name) || FLATE.has(name))) {
      measure.unmeasured += 1;
    }
    await inflateThrough(data, leadingFlate, add);
  }
  return measure;
}

/**
 * The page count the file's page tree declares (the largest `/Count` of a `/Type /Pages` dictionary written in
 * the open), read without parsing the document: pdf.js takes seconds to open a file of 20,000 pages before it
 * can say how many it has. Undefined when the tree sits in a compressed object stream; pdf.js's count decides then.
 */
export function declaredPageCount(pdf: Uint8Array): number | undefined {
  const text = Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength).toString('latin1');
  let most: number | undefined;
  for (const match of text.matchAll(/\/Count\s+(\d{1,9})/g)) {
    const at = match.index ?? 0;
    const dictionary = text.slice(Math.max(0, text.lastIndexOf('obj', at)), text.indexOf('endobj', at) >>> 0);
    if (/\/Type\s*\/Pages\b/.test(dictionary)) {
      most = Math.max(most ?? 0, Number(match[1]));
    }
  }
  return most;
}
