/**
 * Counts the tokens of the texts of one call under one budget, so one request's CPU is bounded whatever it
 * sends (the body limit allows 25 MiB; the slowest texts, random CJK or base64, cost about 2 µs per char).
 * The first EXACT_COUNT_BUDGET_CHARS chars are counted exactly; chars beyond it are estimated with the
 * tokens-per-char ratio measured on what was counted.
 *
 * The counting runs on the encoder thread (encoder-client.ts), which takes the counts that wait in one job. This
 * class, on the main thread, only gathers the texts and applies the budget first, so the job carries no more than
 * it will count: a 25 MiB body is never copied to the thread whole, only the number of chars cut from it is kept.
 */
import { ROUGH_CHARS_PER_TOKEN, sharedEncoder, type Encoder } from './encoder-client.js';
import type { CountJobOutput } from './encoder-jobs.js';
import { WINDOW_CHARS } from './piece-window.js';

export const EXACT_COUNT_BUDGET_CHARS = 512 * 1024;

export class TokenCounter {
  /** The budget left as if every text were counted to its end or the budget's: an upper bound of the thread's. */
  private charsLeft = EXACT_COUNT_BUDGET_CHARS;
  private readonly texts: string[] = [];
  private keptChars = 0;
  /** Chars cut here or by the caller: never counted, estimated with the measured ratio. */
  private omittedChars = 0;
  private fixedTokens = 0;

  constructor(private readonly encoder: Encoder = sharedEncoder()) {}

  /** Adds a text; `omittedChars` are chars of it the caller did not keep, estimated like any over budget. */
  add(text: string, omittedChars = 0): void {
    // The thread counts whole pieces of up to WINDOW_CHARS, so it may count a little past the budget (its budget
    // left is never more than charsLeft), and where a piece ends depends on the next window of text. With one
    // window and one char beyond charsLeft kept, it cuts every piece where it would in the whole text, and so
    // counts exactly what it counted when it had it all; what it does not reach it reports as estimated.
    const kept = this.charsLeft > 0 ? Math.min(text.length, this.charsLeft + WINDOW_CHARS + 1) : 0;
    this.charsLeft -= Math.min(text.length, Math.max(this.charsLeft, 0));
    if (kept > 0) {
      this.texts.push(kept === text.length ? text : text.slice(0, kept));
      this.keptChars += kept;
    }
    this.omittedChars += text.length - kept + omittedChars;
  }

  /** Adds tokens that are not text, such as per-message overheads. */
  addFixed(tokens: number): void {
    this.fixedTokens += tokens;
  }

  async total(): Promise<number> {
    const counted: CountJobOutput =
      this.keptChars === 0
        ? { countedTokens: 0, countedChars: 0, estimatedChars: 0 }
        : await this.encoder.count({ texts: this.texts, budgetChars: EXACT_COUNT_BUDGET_CHARS }, () => ({
            // The rough estimate, through the same arithmetic: omitted chars then get the same rate.
            countedTokens: Math.ceil(this.keptChars / ROUGH_CHARS_PER_TOKEN),
            countedChars: this.keptChars,
            estimatedChars: 0,
          }));
    const ratio = counted.countedChars === 0 ? 0 : counted.countedTokens / counted.countedChars;
    return this.fixedTokens + counted.countedTokens + Math.ceil((counted.estimatedChars + this.omittedChars) * ratio);
  }
}
