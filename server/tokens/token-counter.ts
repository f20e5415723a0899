/**
 * Counts the tokens of the texts of one call under one budget, so one request's CPU is bounded whatever it
 * sends (the body limit allows 25 MiB; the slowest texts, random CJK or base64, cost about 2 µs per char).
 * The first EXACT_COUNT_BUDGET_CHARS chars are counted exactly, piece by piece without holding the event
 * loop; chars beyond it are estimated with the tokens-per-char ratio measured on what was counted.
 */
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { SliceClock } from './slice-clock.js';
import { pieceEnd } from './text-pieces.js';

export const EXACT_COUNT_BUDGET_CHARS = 512 * 1024;

/** Special-token text such as `<|endoftext|>` in a prompt is counted as the plain text it is, not refused. */
export const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

export class TokenCounter {
  private exactCharsLeft = EXACT_COUNT_BUDGET_CHARS;
  private countedChars = 0;
  private countedTokens = 0;
  private estimatedChars = 0;
  private fixedTokens = 0;
  private readonly clock = new SliceClock();

  /** Adds a text; `omittedChars` are chars of it the caller did not keep, estimated like any over budget. */
  async add(text: string, omittedChars = 0): Promise<void> {
    let start = 0;
    while (start < text.length && this.exactCharsLeft > 0) {
      const end = pieceEnd(text, start);
      this.countedTokens += countTokens(text.slice(start, end), PLAIN_TEXT);
      this.countedChars += end - start;
      this.exactCharsLeft -= end - start;
      start = end;
      await this.clock.pause();
    }
    this.estimatedChars += text.length - start + omittedChars;
  }

  /** Adds tokens that are not text, such as per-message overheads. */
  addFixed(tokens: number): void {
    this.fixedTokens += tokens;
  }

  total(): number {
    const ratio = this.countedChars === 0 ? 0 : this.countedTokens / this.countedChars;
    return this.fixedTokens + this.countedTokens + Math.ceil(this.estimatedChars * ratio);
  }
}
