/**
 * Cuts a document's text into passages of about `targetChars` for the search index: paragraphs are packed
 * together while they fit, a paragraph too long is cut at sentence ends, and a sentence too long (a table row,
 * minified text) at a space, so a passage never exceeds `maxChars`. Small passages make bm25 and snippets
 * point at the part of a long file that matches, not at the file as a whole.
 */
export interface PassageOptions {
  targetChars: number;
  maxChars: number;
}

export const DEFAULT_PASSAGE_OPTIONS: PassageOptions = { targetChars: 1_000, maxChars: 1_500 };

/** Sentence ends: `.`, `!`, `?` (and their CJK forms) followed by space, or a line break. */
const SENTENCE_END = /(?<=[.!?。！？])\s+|\n/u;

function cutLong(text: string, maxChars: number): string[] {
  const pieces: string[] = [];
  let rest = text;
  while (rest.length > maxChars) {
    const space = rest.lastIndexOf(' ', maxChars);
    const cut = space > maxChars / 2 ? space : maxChars;
    pieces.push(rest.slice(0, cut).trim());
    rest = rest.slice(cut).trim();
  }
  if (rest) {
    pieces.push(rest);
  }
  return pieces;
}

/** Units no passage splits: whole paragraphs when they fit, else their sentences (or pieces of them). */
function units(text: string, options: PassageOptions): string[] {
  const out: string[] = [];
  for (const paragraph of text.split(/\n\s*\n/)) {
    const clean = paragraph.replace(/[ \t]+/g, ' ').trim();
    if (!clean) {
      continue;
    }
    if (clean.length <= options.targetChars) {
      out.push(clean);
      continue;
    }
    for (const sentence of clean.split(SENTENCE_END)) {
      out.push(...cutLong(sentence.trim(), options.maxChars).filter(Boolean));
    }
  }
  return out;
}

export function splitIntoPassages(text: string, options: PassageOptions = DEFAULT_PASSAGE_OPTIONS): string[] {
  const passages: string[] = [];
  let current = '';
  for (const unit of units(text, options)) {
    if (current && current.length + 1 + unit.length > options.targetChars) {
      passages.push(current);
      current = '';
    }
    current = current ? `${current}\n${unit}` : unit;
  }
  if (current) {
    passages.push(current);
  }
  return passages;
}
