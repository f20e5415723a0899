/**
 * Token counting with a real BPE tokenizer (OpenAI's o200k_base, from the gpt-tokenizer package, which ships
 * its ranks inside the npm package: nothing is downloaded at run time).
 *
 * Used by the built-in chat model (which generates token by token) and for count_tokens estimates of models
 * whose upstream cannot count. Estimates for other vendors' models are documented as estimates.
 */
import { countTokens as countO200k, decode, encode } from 'gpt-tokenizer/encoding/o200k_base';
import type { ChatCallOptions, ChatMessage } from '../providers/types.js';

export function countTextTokens(text: string): number {
  return text.length === 0 ? 0 : countO200k(text);
}

/** Splits text into token-sized pieces whose concatenation is the text again. */
export function splitIntoTokens(text: string): string[] {
  return encode(text).map((token) => decode([token]));
}

/**
 * Per-message and per-image overheads follow OpenAI's published counting recipe for chat models
 * (3 tokens per message, 3 to prime the reply; a low-detail image costs 85 tokens).
 */
const TOKENS_PER_MESSAGE = 3;
const TOKENS_REPLY_PRIMER = 3;
const TOKENS_PER_IMAGE = 85;

function countMessageTokens(message: ChatMessage): number {
  let total = TOKENS_PER_MESSAGE + countTextTokens(message.role);
  for (const part of message.content) {
    switch (part.type) {
      case 'text':
        total += countTextTokens(part.text);
        break;
      case 'image':
        total += TOKENS_PER_IMAGE;
        break;
      case 'reasoning':
        total += countTextTokens(part.text);
        break;
      case 'tool-call':
        total += countTextTokens(part.name) + countTextTokens(part.arguments);
        break;
      case 'tool-result':
        for (const inner of part.content) {
          total += inner.type === 'text' ? countTextTokens(inner.text) : TOKENS_PER_IMAGE;
        }
        break;
    }
  }
  return total;
}

/** Input tokens of a whole call: messages (system included), tool definitions and images. */
export function countCallInputTokens(options: ChatCallOptions): number {
  let total = TOKENS_REPLY_PRIMER;
  for (const message of options.messages) {
    total += countMessageTokens(message);
  }
  for (const tool of options.tools ?? []) {
    total += countTextTokens(JSON.stringify({ name: tool.name, description: tool.description ?? '', parameters: tool.parameters }));
  }
  return total;
}
