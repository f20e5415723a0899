/**
 * The plain text of one text-like file, for the search index: UTF-8 text as it is (Markdown, CSV), HTML without
 * its markup (html-to-text, tables kept as rows of cells), JSON as `path: value` lines, PDF through unpdf
 * (pdf.js). PDF parsing is CPU-heavy, so this runs in the media worker pool (the `extract-text` job), never on
 * the event loop. Bytes that are not text (a NUL byte, invalid UTF-8) are refused as `not_text`.
 *
 * The work is bounded by `ExtractionLimits`, each refusal named by a code and a sentence the file then shows:
 * a PDF's compressed streams are measured before pdf.js decodes any (pdf-streams.ts), its page count is read
 * before any page is parsed, pages are read one at a time with the characters counted as they come and the
 * time budget checked between pages. A single page that never yields is the pool's to stop (its job timeout).
 * Characters are a cap, not a refusal: text past `maxCharacters` is cut off (no further PDF page is read) and
 * the result says `truncated`, so a long file is searchable by its beginning and shows that it was cut.
 */
import { declaredPageCount, measurePdfStreams } from './pdf-streams.js';
import type { TextKind } from './text-kind.js';

export interface ExtractionLimits {
  /** Pages of a PDF; a longer one is refused before its first page is parsed. */
  maxPages: number;
  /** Bytes a PDF's compressed streams may inflate to, all together. */
  maxDecompressedBytes: number;
  /** Characters of extracted text kept, any kind of file; the rest is cut off (`truncated`). */
  maxCharacters: number;
  /** Milliseconds of extraction, checked between steps. */
  budgetMs: number;
}

export const DEFAULT_EXTRACTION_LIMITS: ExtractionLimits = {
  maxPages: 2_000,
  maxDecompressedBytes: 128 * 1024 * 1024,
  maxCharacters: 16_000_000,
  budgetMs: 10_000,
};

export type ExtractionRefusal =
  | 'not_text'
  | 'unreadable'
  | 'encrypted'
  | 'too_many_pages'
  | 'decompressed_too_large'
  | 'time_budget';

/** `truncated`: the text was longer than `maxCharacters` and is its first `maxCharacters` characters. */
export type ExtractedText = { text: string; truncated?: boolean } | { refused: ExtractionRefusal; reason: string };

export interface ExtractTextInput {
  bytes: Uint8Array;
  kind: TextKind;
  /** Defaults to `DEFAULT_EXTRACTION_LIMITS`. */
  limits?: ExtractionLimits;
}

const refuse = (refused: ExtractionRefusal, reason: string): ExtractedText => ({ refused, reason });
const NOT_TEXT = refuse('not_text', 'The file is not text (a NUL byte or invalid UTF-8).');

/** The first `maxCharacters` characters, marked as cut when there were more. */
function capped(text: string, limits: ExtractionLimits): ExtractedText {
  return text.length > limits.maxCharacters ? { text: text.slice(0, limits.maxCharacters), truncated: true } : { text };
}

function outOfTime(limits: ExtractionLimits): ExtractedText {
  return refuse(
    'time_budget',
    `Extracting the file's text took longer than its budget of ${limits.budgetMs} ms (OMNIGATE_INDEX_TIME_BUDGET_MS).`,
  );
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

function decodeUtf8(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0)) {
    return undefined;
  }
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** Leaves of a JSON value as `a.b[0]: value` lines, so keys and values are both searchable. */
function jsonLines(value: unknown, path: string, lines: string[]): void {
  if (Array.isArray(value)) {
    value.forEach((item, index) => jsonLines(item, `${path}[${index}]`, lines));
  } else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      jsonLines(item, path ? `${path}.${key}` : key, lines);
    }
  } else if (value !== null && value !== undefined) {
    lines.push(path ? `${path}: ${String(value)}` : String(value));
  }
}

async function htmlText(html: string): Promise<string> {
  const { convert } = await import('html-to-text');
  return convert(html, {
    wordwrap: false,
    selectors: [
      // By default cells are glued together ("ab"); a table becomes one line per row, cells split by " | ".
      {
        selector: 'table',
        format: 'dataTable',
        options: { colSpacing: 3, maxColumnWidth: 10_000, uppercaseHeaderCells: false },
      },
      // Headings stay as written: upper-casing them would change what a snippet quotes.
      ...(['h1', 'h2', 'h3', 'h4', 'h5', 'h6'] as const).map((selector) => ({
        selector,
        options: { uppercase: false },
      })),
      { selector: 'a', options: { ignoreHref: true } },
      { selector: 'img', format: 'skip' },
    ],
  });
}

/** The text of one page as pdf.js lays it out, lines kept (what unpdf's `extractText` does per page). */
function pageText(items: Array<{ str?: string; hasEOL?: boolean }>): string {
  return items.map((item) => (item.str ?? '') + (item.hasEOL ? '\n' : '')).join('');
}

function tooManyPages(pages: number, limits: ExtractionLimits): ExtractedText {
  return refuse(
    'too_many_pages',
    `The PDF has ${pages} pages; at most ${limits.maxPages} are indexed (OMNIGATE_INDEX_MAX_PAGES).`,
  );
}

async function pdfText(bytes: Uint8Array, limits: ExtractionLimits, late: () => boolean): Promise<ExtractedText> {
  const declared = declaredPageCount(bytes);
  if (declared !== undefined && declared > limits.maxPages) {
    return tooManyPages(declared, limits);
  }
  const streams = await measurePdfStreams(bytes, limits.maxDecompressedBytes, late);
  if (late()) {
    return outOfTime(limits);
  }
  if (streams.over) {
    return refuse(
      'decompressed_too_large',
      `The PDF's compressed streams inflate to more than ${limits.maxDecompressedBytes} bytes (OMNIGATE_INDEX_MAX_DECOMPRESSED_BYTES).`,
    );
  }
  if (streams.encrypted) {
    return refuse(
      'encrypted',
      'The PDF is encrypted: its compressed streams cannot be measured before they are decoded, so it is not indexed.',
    );
  }
  if (streams.unmeasured > 0) {
    return refuse(
      'unreadable',
      `${streams.unmeasured} of the PDF's streams use a compression (LZW, RunLength, or Flate inside ASCII85/ASCIIHex) whose size cannot be measured before decoding, so it is not indexed.`,
    );
  }
  const { getDocumentProxy } = await import('unpdf');
  // pdf.js takes ownership of (detaches) the buffer it is given; hand it a copy.
  const document = await getDocumentProxy(new Uint8Array(bytes));
  try {
    if (document.numPages > limits.maxPages) {
      return tooManyPages(document.numPages, limits);
    }
    const pages: string[] = [];
    let characters = 0;
    for (let number = 1; number <= document.numPages; number += 1) {
      if (late()) {
        return outOfTime(limits);
      }
      const page = await document.getPage(number);
      const text = pageText((await page.getTextContent()).items as Array<{ str?: string; hasEOL?: boolean }>);
      page.cleanup();
      pages.push(text);
      characters += text.length + 2;
      if (characters > limits.maxCharacters) {
        // No further page is parsed: what is kept is already past the cap.
        break;
      }
    }
    // A blank line between pages keeps a sentence of one page from running into the next.
    return capped(pages.join('\n\n'), limits);
  } finally {
    await document.destroy();
  }
}

async function plainText(bytes: Uint8Array, kind: TextKind, limits: ExtractionLimits): Promise<ExtractedText> {
  const text = decodeUtf8(bytes);
  if (text === undefined) {
    return NOT_TEXT;
  }
  let plain = text;
  if (kind === 'html') {
    plain = await htmlText(text);
  } else if (kind === 'json') {
    try {
      const lines: string[] = [];
      jsonLines(JSON.parse(text), '', lines);
      plain = lines.join('\n');
    } catch {
      plain = text;
    }
  }
  return capped(plain, limits);
}

export async function extractText({
  bytes,
  kind,
  limits = DEFAULT_EXTRACTION_LIMITS,
}: ExtractTextInput): Promise<ExtractedText> {
  const deadline = performance.now() + limits.budgetMs;
  const late = () => performance.now() > deadline;
  if (kind !== 'pdf') {
    return plainText(bytes, kind, limits);
  }
  try {
    return await pdfText(bytes, limits, late);
  } catch (error) {
    // A damaged PDF, or one that needs a password, is not indexed; the file says why.
    return refuse(
      'unreadable',
      `The PDF could not be read: ${error instanceof Error ? error.message.slice(0, 200) : 'unknown error'}.`,
    );
  }
}
