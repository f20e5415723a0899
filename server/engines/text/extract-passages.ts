/**
 * What the search index stores of a file: its text extracted (extract-text.ts) and cut into passages
 * (passages.ts), both in the extraction worker. Splitting 10 MB of text takes a few hundred milliseconds; done on
 * the main thread it stalled every chat call that arrived meanwhile (bench/README.md, embeddings), so the main
 * thread only receives the finished passages.
 */
import { type ExtractedText, type ExtractTextInput, extractText } from './extract-text.js';
import { splitIntoPassages } from './passages.js';

/**
 * The file's passages in order, or why there are none; `truncated` as extract-text.ts sets it. With `sendPart`,
 * `passages` holds only the last ones: the others went ahead, in order.
 */
export type ExtractedPassages = { passages: string[]; truncated?: boolean } | Exclude<ExtractedText, { text: string }>;

/**
 * Passages per message from the worker. A 10 MB file's 11,000 passages in one message were one structured clone
 * of 10 MB that the event loop read in one go (9–15 ms in a CPU profile of the gateway beside chat); 250 (about
 * 250 KB) cost it a fraction of a millisecond each, and the index starts writing them as the first arrives.
 */
export const PASSAGES_PER_MESSAGE = 250;

export async function extractPassages(
  input: ExtractTextInput,
  sendPart?: (passages: string[]) => void,
): Promise<ExtractedPassages> {
  const extracted = await extractText(input);
  if ('refused' in extracted) {
    return extracted;
  }
  let passages = splitIntoPassages(extracted.text);
  if (sendPart) {
    // Full parts ahead; the last (full or not) comes with the result.
    const last = Math.max(0, Math.floor((passages.length - 1) / PASSAGES_PER_MESSAGE) * PASSAGES_PER_MESSAGE);
    for (let start = 0; start < last; start += PASSAGES_PER_MESSAGE) {
      sendPart(passages.slice(start, start + PASSAGES_PER_MESSAGE));
    }
    passages = passages.slice(last);
  }
  return extracted.truncated ? { passages, truncated: true } : { passages };
}
