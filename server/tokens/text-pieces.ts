/**
 * Cuts text into pieces that BPE can encode in bounded time. BPE cost grows with the square of a pre-token's
 * length (the o200k pre-tokenizer makes one pre-token of a whole run of letters, punctuation or spaces: 100,000
 * `A` took seconds), so a piece ends on a pre-token boundary of the o200k split pattern itself, which keeps
 * counts of normal text exact; only a pre-token longer than a window is cut inside, into short pieces
 * (an estimate for such runs, and it is what makes them linear). Runs on the encoder thread only.
 */
import { O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/encodingParams/constants';
import { WINDOW_CHARS } from './piece-window.js';

/** A pre-token longer than a window is cut into pieces this long: short enough to encode in microseconds. */
const LONG_RUN_PIECE_CHARS = 128;

const preToken = new RegExp(O200K_TOKEN_SPLIT_REGEX.source, 'gu');

/** Longer than the longest optional ending of a pre-token (the contraction `'ll`). */
const END_MARGIN_CHARS = 8;

function isWhitespace(code: number): boolean {
  return /\s/.test(String.fromCharCode(code));
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** Where the piece of `text` that starts at `start` ends. */
export function pieceEnd(text: string, start: number): number {
  if (text.length - start <= WINDOW_CHARS) {
    return text.length;
  }
  const window = text.slice(start, start + WINDOW_CHARS);
  let end = 0;
  // A piece ends where a pre-token ends in the whole text, so that encoding the piece alone splits it the
  // same way. Two cases can differ at a piece's end, so cuts avoid them: a pre-token close to the window's
  // end may continue past it (`don` + `'t`, letters), and trailing whitespace pre-tokens merge when nothing
  // follows them (`\t` + ` ` becomes `\t `): a cut comes after a non-space char, a margin before the window's end.
  for (const match of window.matchAll(preToken)) {
    const matchEnd = match.index + match[0].length;
    if (matchEnd > window.length - END_MARGIN_CHARS) {
      break;
    }
    if (!isWhitespace(window.charCodeAt(matchEnd - 1))) {
      end = matchEnd;
    }
  }
  if (end > 0) {
    return start + end;
  }
  // One pre-token (or whitespace) fills the whole window: cut inside it, never between the halves of a surrogate pair.
  let cut = start + LONG_RUN_PIECE_CHARS;
  if (isLowSurrogate(text.charCodeAt(cut))) {
    cut += 1;
  }
  return cut;
}
