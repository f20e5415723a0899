/**
 * What the encoder thread does (encoder-worker.ts): the only code that loads OpenAI's o200k_base encoder, from
 * the gpt-tokenizer package, which ships its ranks inside the npm package (nothing is downloaded at run time).
 * Loading it (o200k-encoder.ts) costs about 45 MiB and blocks for about 150 ms, so the main thread never does: it
 * posts the counts that wait to this thread as one `countBatch` job; the thread is started on the first count and
 * exits when idle (encoder-client.ts).
 *
 * The main thread has already cut the texts to what the budget lets be counted exactly (token-counter.ts), so a
 * job's CPU stays bounded (the slowest texts, random CJK or base64, cost about 2 µs per char). No slicing is
 * needed here: this thread has no event loop to share.
 */
import type { JobTable } from '../engines/pool/job-protocol.js';
import { loadO200kEncoder } from './o200k-encoder.js';
import { pieceEnd } from './text-pieces.js';

/** Loaded with the thread's first job. */
let encoder: ReturnType<typeof loadO200kEncoder> | undefined;

/** Special-token text such as `<|endoftext|>` in a prompt is counted as the plain text it is, not refused. */
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

export interface CountJobInput {
  /** A call's texts, in order, each already cut by the main thread (it sends the chars it cut as a length). */
  texts: string[];
  /** Chars counted exactly, across all texts; the rest is estimated with the ratio measured on them. */
  budgetChars: number;
}

export interface CountJobOutput {
  countedTokens: number;
  countedChars: number;
  /** Chars of the texts left uncounted once the budget was spent. */
  estimatedChars: number;
}

export const encoderJobs = {
  /** Counts texts piece by piece until the budget is spent; a piece is counted whole, so it may go past it. */
  async count({ texts, budgetChars }: CountJobInput): Promise<CountJobOutput> {
    const { countTokens } = await (encoder ??= loadO200kEncoder());
    let charsLeft = budgetChars;
    const output: CountJobOutput = { countedTokens: 0, countedChars: 0, estimatedChars: 0 };
    for (const text of texts) {
      let start = 0;
      while (start < text.length && charsLeft > 0) {
        const end = pieceEnd(text, start);
        output.countedTokens += countTokens(text.slice(start, end), PLAIN_TEXT);
        output.countedChars += end - start;
        charsLeft -= end - start;
        start = end;
      }
      output.estimatedChars += text.length - start;
    }
    return output;
  },

  /** The counts of several calls in one job (encoder-client.ts batches the counts that wait). */
  async countBatch({ counts }: { counts: CountJobInput[] }): Promise<CountJobOutput[]> {
    const outputs: CountJobOutput[] = [];
    for (const input of counts) {
      outputs.push(await encoderJobs.count(input));
    }
    return outputs;
  },

  /** Token-sized pieces of the text whose concatenation is the text again. */
  async split({ text }: { text: string }): Promise<string[]> {
    const { decode, encode } = await (encoder ??= loadO200kEncoder());
    const pieces: string[] = [];
    for (let start = 0; start < text.length; ) {
      const end = pieceEnd(text, start);
      for (const token of encode(text.slice(start, end), PLAIN_TEXT)) {
        pieces.push(decode([token]));
      }
      start = end;
    }
    return pieces;
  },
} satisfies JobTable;

export type EncoderJobs = typeof encoderJobs;
