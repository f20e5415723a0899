/**
 * The main thread cuts a call's texts to the budget before they go to the encoder thread; the count must be
 * what the encoder gave when it had the whole texts (pieces are counted whole, so the encoder's budget runs a
 * little past the main thread's, and where a piece ends depends on the text after it).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createEncoder, type Encoder } from './encoder-client.js';
import { encoderJobs } from './encoder-jobs.js';
import { WINDOW_CHARS } from './piece-window.js';
import { EXACT_COUNT_BUDGET_CHARS, TokenCounter } from './token-counter.js';

const encoder = createEncoder();
afterAll(() => encoder.close());

/** The count as it was made before the main thread cut anything: the encoder's job over the whole texts. */
async function uncutCount(texts: string[], omitted: number[]): Promise<number> {
  const counted = await encoderJobs.count({ texts, budgetChars: EXACT_COUNT_BUDGET_CHARS });
  const ratio = counted.countedChars === 0 ? 0 : counted.countedTokens / counted.countedChars;
  const omittedChars = omitted.reduce((sum, chars) => sum + chars, 0);
  return 7 + counted.countedTokens + Math.ceil((counted.estimatedChars + omittedChars) * ratio);
}

const words = "Words, and don't forget 12345 numbers!\n\t  spaces   ".repeat(30);
const runs = (char: string, length: number) => char.repeat(length);
const base64 = (length: number) => randomBytes(length).toString('base64').slice(0, length);

describe('TokenCounter', () => {
  const calls: Record<string, { texts: string[]; omitted?: number[] }> = {
    'one text just over the budget': {
      texts: [words.repeat(Math.ceil((EXACT_COUNT_BUDGET_CHARS + 700) / words.length))],
    },
    'texts that cross the budget inside a piece': {
      texts: [
        words.repeat(Math.floor((EXACT_COUNT_BUDGET_CHARS - 500) / words.length)),
        words.repeat(3),
        runs('x', 5_000),
        words,
      ],
    },
    'long runs cut inside, then more texts': {
      texts: [runs('A', EXACT_COUNT_BUDGET_CHARS - 100), runs(' ', 3_000), 'after', base64(2_000)],
    },
    'many texts, some with omitted chars': {
      texts: Array.from({ length: 40 }, (_, i) => (i % 3 === 0 ? base64(20_000) : words.repeat(20))),
      omitted: Array.from({ length: 40 }, (_, i) => (i % 5 === 0 ? 10_000 : 0)),
    },
    'a 25 MiB text': { texts: [runs('é', 25 * 1024 * 1024)] },
  };
  for (const [name, { texts, omitted = texts.map(() => 0) }] of Object.entries(calls)) {
    it(`counts as if it had sent the whole texts: ${name}`, async () => {
      const counter = new TokenCounter(encoder);
      counter.addFixed(7);
      texts.forEach((text, i) => counter.add(text, omitted[i]));
      expect(await counter.total()).toBe(await uncutCount(texts, omitted));
    });
  }

  it('sends the encoder thread no more than the budget and one window, whatever the call holds', async () => {
    const sent: string[][] = [];
    const recorder: Encoder = {
      run: (_kind, _input, fallback) => Promise.resolve(fallback()),
      count: (input, fallback) => {
        sent.push(input.texts);
        return Promise.resolve(fallback());
      },
      threads: () => 0,
      close: async () => {},
    };
    const counter = new TokenCounter(recorder);
    for (const length of [1_000, 25 * 1024 * 1024, 5_000, 3 * 1024 * 1024]) {
      counter.add('x'.repeat(length));
    }
    const total = await counter.total();
    expect(sent).toHaveLength(1);
    expect(sent[0].reduce((sum, text) => sum + text.length, 0)).toBe(EXACT_COUNT_BUDGET_CHARS + WINDOW_CHARS + 1);
    // The rough estimate covers every char, the cut ones too.
    expect(total).toBeGreaterThanOrEqual(Math.ceil((1_000 + 25 * 1024 * 1024 + 5_000 + 3 * 1024 * 1024) / 4));
  });
});
