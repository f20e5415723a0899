/**
 * Token counting with a real BPE tokenizer (OpenAI's o200k_base, from the gpt-tokenizer package).
 *
 * Used by the built-in chat model (which generates token by token) and for count_tokens estimates of models
 * whose upstream cannot count. Estimates for other vendors' models are documented as estimates.
 *
 * The encoder runs in a worker thread started on the first count (encoder-client.ts): this module and the
 * rest of the main thread never load it. A call's texts are counted exactly up to a budget and extrapolated
 * beyond it (see token-counter.ts); the counts that wait go to the thread together. If the thread cannot
 * answer, counts are rough estimates (about 4 chars per token) and the call goes on.
 */
import type { ChatCallOptions, ChatMessage } from '../core/chat.js';
import { ROUGH_CHARS_PER_TOKEN, sharedEncoder } from './encoder-client.js';
import { jsonText } from './json-text.js';
import { TokenCounter } from './token-counter.js';

export async function countTextTokens(text: string): Promise<number> {
  const counter = new TokenCounter();
  counter.add(text);
  return counter.total();
}

/** Splits text into token-sized pieces whose concatenation is the text again. */
export async function splitIntoTokens(text: string): Promise<string[]> {
  if (text === '') {
    return [];
  }
  return sharedEncoder().run('split', { text }, () => roughPieces(text));
}

/** The fallback split: pieces of about a token's length, never between the halves of a surrogate pair. */
function roughPieces(text: string): string[] {
  const pieces: string[] = [];
  for (let start = 0; start < text.length; ) {
    let end = Math.min(text.length, start + ROUGH_CHARS_PER_TOKEN);
    const code = text.charCodeAt(end);
    if (end < text.length && code >= 0xdc00 && code <= 0xdfff) {
      end += 1;
    }
    pieces.push(text.slice(start, end));
    start = end;
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

function addMessage(counter: TokenCounter, message: ChatMessage): void {
  counter.addFixed(TOKENS_PER_MESSAGE);
  counter.add(message.role);
  for (const part of message.content) {
    switch (part.type) {
      case 'text':
      case 'reasoning':
        counter.add(part.text);
        break;
      case 'image':
        counter.addFixed(TOKENS_PER_IMAGE);
        break;
      case 'tool-call':
        counter.add(part.name);
        counter.add(part.arguments);
        break;
      case 'tool-result':
        for (const inner of part.content) {
          if (inner.type === 'text') {
            counter.add(inner.text);
          } else {
            counter.addFixed(TOKENS_PER_IMAGE);
          }
        }
        break;
    }
  }
}

/** Input tokens of a whole call: messages (system included), tool definitions and images, in one job. */
export async function countCallInputTokens(options: ChatCallOptions): Promise<number> {
  const counter = new TokenCounter();
  counter.addFixed(TOKENS_REPLY_PRIMER);
  for (const message of options.messages) {
    addMessage(counter, message);
  }
  for (const tool of options.tools ?? []) {
    counter.add(jsonText({ name: tool.name, description: tool.description ?? '', parameters: tool.parameters }));
  }
  return counter.total();
}
