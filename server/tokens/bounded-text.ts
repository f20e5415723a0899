/**
 * Text an upstream produced, collected to estimate its tokens when the upstream reports no usage. Only the
 * part the counter counts exactly is kept; beyond it only the length, which the counter extrapolates: a
 * 10 MB answer no longer costs 10 MB of text and a full tokenization.
 */
import { EXACT_COUNT_BUDGET_CHARS, TokenCounter } from './token-counter.js';

export class BoundedText {
  private kept = '';
  private omittedChars = 0;

  append(text: string): void {
    const room = EXACT_COUNT_BUDGET_CHARS - this.kept.length;
    if (text.length <= room) {
      this.kept += text;
    } else {
      this.kept += text.slice(0, room);
      this.omittedChars += text.length - room;
    }
  }

  async countTokens(): Promise<number> {
    const counter = new TokenCounter();
    counter.add(this.kept, this.omittedChars);
    return counter.total();
  }
}
