/**
 * The plain text of one text-like file, for the search index: UTF-8 text as it is (Markdown, CSV), HTML without
 * its markup (html-to-text, tables kept as rows of cells), JSON as `path: value` lines, PDF through unpdf
 * (pdf.js). PDF parsing is CPU-heavy, so this runs in the media worker pool (the `extract-text` job), never on
 * the event loop. Bytes that are not text (a NUL byte, invalid UTF-8) give `undefined`: they are not indexed.
 */
import type { TextKind } from './text-kind.js';

export interface ExtractTextInput {
  bytes: Uint8Array;
  kind: TextKind;
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
      { selector: 'table', format: 'dataTable', options: { colSpacing: 3, maxColumnWidth: 10_000, uppercaseHeaderCells: false } },
      // Headings stay as written: upper-casing them would change what a snippet quotes.
      ...(['h1', 'h2', 'h3', 'h4', 'h5', 'h6'] as const).map((selector) => ({ selector, options: { uppercase: false } })),
      { selector: 'a', options: { ignoreHref: true } },
      { selector: 'img', format: 'skip' },
    ],
  });
}

async function pdfText(bytes: Uint8Array): Promise<string> {
  const { extractText, getDocumentProxy } = await import('unpdf');
  // pdf.js takes ownership of (detaches) the buffer it is given; hand it a copy.
  const document = await getDocumentProxy(new Uint8Array(bytes));
  try {
    const { text } = await extractText(document, { mergePages: false });
    // A blank line between pages keeps a sentence of one page from running into the next.
    return text.join('\n\n');
  } finally {
    await document.destroy();
  }
}

export async function extractText({ bytes, kind }: ExtractTextInput): Promise<string | undefined> {
  if (kind === 'pdf') {
    try {
      return await pdfText(bytes);
    } catch {
      // A damaged or encrypted PDF is simply not indexed.
      return undefined;
    }
  }
  const text = decodeUtf8(bytes);
  if (text === undefined) {
    return undefined;
  }
  if (kind === 'html') {
    return htmlText(text);
  }
  if (kind === 'json') {
    try {
      const lines: string[] = [];
      jsonLines(JSON.parse(text), '', lines);
      return lines.join('\n');
    } catch {
      return text;
    }
  }
  return text;
}
