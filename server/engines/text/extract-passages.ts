/**
 * What the search index stores of a file: its text extracted (extract-text.ts) and cut into passages
 * (passages.ts), both in the extraction worker. Splitting 10 MB of text takes a few hundred milliseconds; done on
 * the main thread it stalled every chat call that arrived meanwhile (bench/README.md, embeddings), so the main
 * thread only receives the finished passages.
 */
import { type ExtractedText, type ExtractTextInput, extractText } from './extract-text.js';
import { splitIntoPassages } from './passages.js';

/** The file's passages in order, or why there are none; `truncated` as extract-text.ts sets it. */
export type ExtractedPassages = { passages: string[]; truncated?: boolean } | Exclude<ExtractedText, { text: string }>;

export async function extractPassages(input: ExtractTextInput): Promise<ExtractedPassages> {
  const extracted = await extractText(input);
  if ('refused' in extracted) {
    return extracted;
  }
  const passages = splitIntoPassages(extracted.text);
  return extracted.truncated ? { passages, truncated: true } : { passages };
}
