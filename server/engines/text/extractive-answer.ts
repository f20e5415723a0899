/**
 * The built-in answer writer: no language model, only the sources' own sentences. Sentences are scored by how
 * many of the question's words they hold (a word matches on its first five letters, a crude stem that catches
 * "index"/"indexing"), the best few are kept, and each ends with the `[n]` marker of the source it came from —
 * every sentence of the answer is cited, because every sentence is a quotation. Sources are numbered here in
 * the order the answer first uses them.
 */
import { queryTerms } from './safe-match.js';

export interface AnswerSource {
  /** The text to quote from (a whole passage, or a snippet). */
  text: string;
}

export interface ExtractiveAnswer {
  /** The answer text: sentences, each followed by its marker. */
  answer: string;
  /** The sentences as sent, in order (each with its marker), for streaming. */
  sentences: string[];
  /** `order[i]` is the source (index into `sources`) that citation `i + 1` refers to. */
  order: number[];
}

const STOP_WORDS = new Set(
  'a an and are as at be by can could did do does for from had has have how i if in into is it its me my no not of on or our she so than that the their them then there these they this to was we were what when where which who why will with would you your'.split(
    ' ',
  ),
);
const STEM_LENGTH = 5;
const MIN_SENTENCE_CHARS = 12;
const MAX_SENTENCE_CHARS = 400;
export const DEFAULT_ANSWER_SENTENCES = 3;

const stem = (word: string) => word.slice(0, STEM_LENGTH);

/** An ATX heading (`## Fuel dock`) or a setext underline (`=====`, `-----`). */
const ATX_HEADING = /^ {0,3}#{1,6}(?:\s|$)/;
const SETEXT_UNDERLINE = /^ {0,3}(?:=+|-+)\s*$/;

/**
 * The text without its Markdown heading lines: a heading is a label, not a statement, and quoted it reads as
 * "## Fuel dock [1]." The words still count in the search (the passage keeps them); only the answer skips them.
 */
function withoutHeadings(text: string): string {
  const lines = text.split('\n');
  return lines
    .filter(
      (line, index) =>
        !ATX_HEADING.test(line) &&
        !SETEXT_UNDERLINE.test(line) &&
        !(line.trim() && SETEXT_UNDERLINE.test(lines[index + 1] ?? '')),
    )
    .join('\n');
}

function sentencesOf(text: string): string[] {
  return withoutHeadings(text)
    .replace(/…/g, ' ')
    .split(/(?<=[.!?。！？])\s+|\n+/u)
    .map((sentence) => sentence.replace(/\s+/g, ' ').trim())
    .filter((sentence) => sentence.length >= MIN_SENTENCE_CHARS && /[\p{L}\p{N}]/u.test(sentence));
}

function trimmed(sentence: string): string {
  if (sentence.length <= MAX_SENTENCE_CHARS) {
    return sentence;
  }
  const cut = sentence.lastIndexOf(' ', MAX_SENTENCE_CHARS);
  return `${sentence.slice(0, cut > 0 ? cut : MAX_SENTENCE_CHARS)}…`;
}

/** `Sentence text [2].` — the marker goes before the closing punctuation, as in the contract's example. */
function cited(sentence: string, marker: number): string {
  const match = /^(.*?)([.!?。！？]*)$/su.exec(sentence)!;
  return `${match[1]!.trimEnd()} [${marker}]${match[2] || '.'}`;
}

export function extractiveAnswer(
  query: string,
  sources: AnswerSource[],
  maxSentences = DEFAULT_ANSWER_SENTENCES,
): ExtractiveAnswer {
  const terms = new Set(
    queryTerms(query)
      .filter((term) => !STOP_WORDS.has(term))
      .map(stem),
  );
  const candidates: Array<{ text: string; source: number; score: number; position: number }> = [];
  sources.forEach((source, sourceIndex) => {
    sentencesOf(source.text).forEach((text, position) => {
      const words = new Set(queryTerms(text).map(stem));
      let hits = 0;
      for (const term of terms) {
        if (words.has(term)) {
          hits += 1;
        }
      }
      // Earlier sources ranked higher in the search; a small bonus keeps their sentences ahead on ties.
      candidates.push({
        text: trimmed(text),
        source: sourceIndex,
        score: hits - sourceIndex * 0.01 - position * 0.001,
        position,
      });
    });
  });
  const seen = new Set<string>();
  let chosen = candidates
    .filter((candidate) => candidate.score > 0)
    .sort((a, b) => b.score - a.score)
    .filter((candidate) => !seen.has(candidate.text) && seen.add(candidate.text))
    .slice(0, maxSentences);
  if (chosen.length === 0 && candidates.length > 0) {
    // The words matched only a title: the best source's opening sentence is the best quotation left.
    chosen = [candidates[0]!];
  }
  const order: number[] = [];
  const sentences = chosen.map((candidate) => {
    let marker = order.indexOf(candidate.source) + 1;
    if (marker === 0) {
      order.push(candidate.source);
      marker = order.length;
    }
    return cited(candidate.text, marker);
  });
  return { answer: sentences.join(' '), sentences, order };
}
