/**
 * Which of the text-like formats the search index reads a file as, from its sniffed media type and, because
 * sniffing cannot tell Markdown or CSV from plain text, its filename. Anything else is not indexed.
 */
export const TEXT_KINDS = ['text', 'markdown', 'html', 'json', 'csv', 'pdf'] as const;
export type TextKind = (typeof TEXT_KINDS)[number];

const BY_EXTENSION: Record<string, TextKind> = {
  txt: 'text',
  text: 'text',
  log: 'text',
  md: 'markdown',
  markdown: 'markdown',
  html: 'html',
  htm: 'html',
  xhtml: 'html',
  json: 'json',
  csv: 'csv',
  tsv: 'csv',
  pdf: 'pdf',
};

const BY_MEDIA_TYPE: Record<string, TextKind> = {
  'application/pdf': 'pdf',
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'application/json': 'json',
  'text/csv': 'csv',
  'text/tab-separated-values': 'csv',
  'text/markdown': 'markdown',
  'text/plain': 'text',
};

export function textKindOf(mediaType: string, filename: string): TextKind | undefined {
  const bare = mediaType.split(';')[0]!.trim().toLowerCase();
  // The media type wins when it names a format with structure (a PDF called notes.txt is still a PDF).
  const byType = BY_MEDIA_TYPE[bare];
  if (byType && byType !== 'text') {
    return byType;
  }
  // Sniffed text (or bytes a sniffer could not name) may be any text-like format: the name tells which.
  // Anything else the sniffer named (an image called picture.txt) is not text, whatever its name.
  const textual = byType === 'text' || bare.startsWith('text/') || bare === 'application/octet-stream' || bare === '';
  if (!textual) {
    return undefined;
  }
  const dot = filename.lastIndexOf('.');
  const byName = dot >= 0 ? BY_EXTENSION[filename.slice(dot + 1).toLowerCase()] : undefined;
  if (byName && byName !== 'pdf') {
    return byName;
  }
  // Unknown bytes with no text-like name are left alone; the decoder refuses non-text anyway.
  return bare.startsWith('text/') ? 'text' : undefined;
}
