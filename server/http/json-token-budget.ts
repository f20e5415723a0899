/**
 * A budget on how many JSON tokens a body may hold, counted on the raw bytes before JSON.parse runs.
 *
 * JSON.parse costs time per value, not per byte: 24 MB of one string parses in tens of milliseconds, but 24 MB
 * of `[],[],…` takes seconds, and 400,000 tiny messages (13.6 MB) took 0.4 s before the contract's `maxItems`
 * could look at them. Parsing is synchronous, so that time is the event loop's. The counter counts the
 * structural bytes outside strings (`{`, `[`, `,`, `:`: one per key or value, so a close bound on what
 * JSON.parse would build) chunk by chunk as the body arrives, so its own cost is spread over the reads and a
 * body over the budget is refused before it is parsed at all.
 *
 * The budget bounds how long any accepted body can hold the event loop, whatever its shape: parsing, validating
 * and answering cost about 0.2–0.7 µs per key or value (content blocks, each tried against every block type by
 * the validator, are the dearest), so 1,000,000 let a 5 MB body of content blocks hold the loop 0.6 s. It is
 * above what real clients send: 10,000 messages (the contract's `maxItems`) of the shape Claude Code sends —
 * text, tool_use and tool_result blocks with `cache_control`, about 18 keys and values each — and 24 tools fit,
 * and a long Claude Code session is compacted well before that many messages.
 */
import { ApiError } from '../core/api-error.js';

export const MAX_JSON_TOKENS = 200_000;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

export interface JsonTokenCounter {
  /** Counts the tokens in the next chunk of the body; stops counting once past the limit. */
  write(chunk: Uint8Array): void;
  /** Whether the body so far holds more tokens than the limit. */
  readonly over: boolean;
  /** The keys and values counted so far (counting stops once past the limit). */
  readonly count: number;
  /**
   * The deepest nesting of objects and arrays seen so far (1 for a flat object), counted on the same bytes, so
   * the depth limit (json-depth.ts) needs no walk over the parsed body.
   */
  readonly deepest: number;
}

/**
 * A counter that carries its place (inside a string, after a backslash) from one chunk to the next. Inside a
 * string it jumps to the next quote with the native `indexOf`, so a long string (a base64 image, a pasted
 * document) costs almost nothing; the byte loop runs only between strings.
 */
export function createJsonTokenCounter(limit: number): JsonTokenCounter {
  let count = 0;
  let depth = 0;
  let deepest = 0;
  let inString = false;
  let escaped = false;
  return {
    write(data) {
      const chunk = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
      let index = 0;
      while (index < chunk.length && count <= limit) {
        if (inString) {
          if (escaped) {
            escaped = false;
            index += 1;
            continue;
          }
          const quote = chunk.indexOf(QUOTE, index);
          const end = quote === -1 ? chunk.length : quote;
          let backslashes = 0;
          while (end - backslashes - 1 >= index && chunk[end - backslashes - 1] === BACKSLASH) {
            backslashes += 1;
          }
          if (quote === -1) {
            escaped = backslashes % 2 === 1; // the next chunk starts with an escaped byte
            return;
          }
          inString = backslashes % 2 === 1; // an escaped quote does not close the string
          index = quote + 1;
          continue;
        }
        const byte = chunk[index]!;
        if (byte === QUOTE) {
          inString = true;
        } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
          count += 1;
          depth += 1;
          if (depth > deepest) {
            deepest = depth;
          }
        } else if (byte === COMMA || byte === COLON) {
          count += 1;
        } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
          depth -= 1;
        }
        index += 1;
      }
    },
    get over() {
      return count > limit;
    },
    get count() {
      return count;
    },
    get deepest() {
      return deepest;
    },
  };
}

export function tooManyJsonTokens(maxTokens: number): ApiError {
  return new ApiError(
    400,
    `The JSON body holds more than ${maxTokens.toLocaleString('en-US')} keys and values; no request of this API needs that many.`,
    { code: 'too_many_json_values' },
  );
}
