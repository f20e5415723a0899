/**
 * Token counting with a real BPE tokenizer (OpenAI's o200k_base, from the gpt-tokenizer package, which ships
 * its ranks inside the npm package: nothing is downloaded at run time).
 *
 * Used by the built-in chat model (which generates token by token) and for count_tokens estimates of models
 * whose upstream cannot count. Estimates for other vendors' models are documented as estimates.
 *
 * Counting is asynchronous: long texts are counted in slices that share the event loop, and a call's texts
 * are counted exactly up to a budget and extrapolated beyond it (see token-counter.ts).
 */
import { decode, encode } from 'gpt-tokenizer/encoding/o200k_base';
import type { ChatCallOptions, ChatMessage } from '../core/chat.js';
import { jsonText } from './json-text.js';
import { SliceClock } from './slice-clock.js';
import { PLAIN_TEXT, TokenCounter } from './token-counter.js';
import { pieceEnd } from './text-pieces.js';

export async function countTextTokens(text: string): Promise<number> {
  const counter = new TokenCounter();
  await counter.add(text);
  return counter.total();
}

/** Splits text into token-sized pieces whose concatenation is the text again. */
export async function splitIntoTokens(text: string): Promise<string[]> {
  const clock = new SliceClock();
  const pieces: string[] = [];
  for (let start = 0; start < text.length; ) {
    const end = pieceEnd(text, start);
    for (const token of encode(text.slice(start, end), PLAIN_TEXT)) {
      pieces.push(decode([token]));
    }
    start = end;
    await clock.pause();
  }
  return pieces;
}

/**
 * Per-message and per-image overheads follow OpenAI's published counting recipe for chat models
 * (3 tokens per message, 3 to prime the reply; a low-detail image costs 85 tokens).
 */
const TOKENS_PER_MESSAGE = 3;
const TOKENS_REPLY_PRIMER = 3;
const TOKENS_PER_IMAGE = 85;

async function addMessage(counter: TokenCounter, message: ChatMessage): Promise<void> {
  counter.addFixed(TOKENS_PER_MESSAGE);
  await counter.add(message.role);
  for (const part of message.content) {
    switch (part.type) {
      case 'text':
      case 'reasoning':
        await counter.add(part.text);
        break;
      case 'image':
        counter.addFixed(TOKENS_PER_IMAGE);
        break;
      case 'tool-call':
        await counter.add(part.name);
        await counter.add(part.arguments);
        break;
      case 'tool-result':
        for (const inner of part.content) {
          if (inner.type === 'text') {
            await counter.add(inner.text);
          } else {
            counter.addFixed(TOKENS_PER_IMAGE);
          }
        }
        break;
    }
  }
}

/** Input tokens of a whole call: messages (system included), tool definitions and images. */
export async function countCallInputTokens(options: ChatCallOptions): Promise<number> {
  const counter = new TokenCounter();
  counter.addFixed(TOKENS_REPLY_PRIMER);
  for (const message of options.messages) {
    await addMessage(counter, message);
  }
  for (const tool of options.tools ?? []) {
    await counter.add(jsonText({ name: tool.name, description: tool.description ?? '', parameters: tool.parameters }));
  }
  return counter.total();
}
