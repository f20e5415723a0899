/**
 * What the body threads (body-pool.ts) do with a request's large inputs, each exactly as the main thread would:
 *
 * - `parseJson`: a body's raw bytes, as express.json (body-parser 2, strict mode, charset utf-8) parses them —
 *   decoded as UTF-8 dropping a leading BOM, an empty body is `{}`, a body not starting with `{` or `[` is
 *   refused with the message JSON.parse would give, then JSON.parse — so a body parsed in a thread is the same
 *   value, or fails with the same message, as one parsed in place. A syntax error is an answer, not a failure of
 *   the job: the caller turns it into body-parser's own error, which the error handler answers as `invalid_json`.
 * - `decodeBase64`: a string's code units, each cut to its low byte (as `Buffer.write(…, 'latin1')` does), which
 *   is what Node's base64 decoder reads of a string, decoded as `Buffer.from(text, 'base64')` decodes it.
 */

export interface BytesInput {
  bytes: ArrayBuffer;
  byteOffset: number;
  byteLength: number;
}

export type ParseJsonOutput = { value: unknown } | { syntaxError: string };

export type BodyJobs = {
  parseJson(input: BytesInput): Promise<ParseJsonOutput>;
  decodeBase64(input: BytesInput): Promise<Uint8Array>;
};

const FIRST_NON_WHITESPACE = /^[\x20\x09\x0a\x0d]*([^\x20\x09\x0a\x0d]|$)/;

function bufferOf(input: BytesInput): Buffer {
  return Buffer.from(input.bytes, input.byteOffset, input.byteLength);
}

export function parseJsonBytes(input: BytesInput): ParseJsonOutput {
  let text = bufferOf(input).toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) {
    text = text.slice(1); // iconv-lite, which body-parser decodes with, strips the BOM
  }
  if (text.length === 0) {
    return { value: {} };
  }
  if (text[0] !== '{' && text[0] !== '[') {
    const first = FIRST_NON_WHITESPACE.exec(text)?.[1] || undefined;
    if (first !== '{' && first !== '[') {
      return { syntaxError: strictViolation(text, first) };
    }
  }
  try {
    return { value: JSON.parse(text) };
  } catch (error) {
    return { syntaxError: (error as Error).message };
  }
}

/** body-parser's message for a body whose first value is not an object or array (createStrictSyntaxError). */
function strictViolation(text: string, first: string | undefined): string {
  const index = first === undefined ? -1 : text.indexOf(first);
  const partial = index === -1 ? '' : text.substring(0, index) + '#'.repeat(text.length - index);
  try {
    JSON.parse(partial);
    return 'strict violation';
  } catch (error) {
    return (error as Error).message.replace(/#+/g, (placeholder) => text.substring(index, index + placeholder.length));
  }
}

/** Decodes the low bytes of a string's code units as base64, into bytes that own their ArrayBuffer (transferable). */
export function decodeBase64Bytes(input: BytesInput): Uint8Array {
  const decoded = Buffer.from(bufferOf(input).toString('latin1'), 'base64');
  if (decoded.buffer.byteLength > Buffer.poolSize) {
    return new Uint8Array(decoded.buffer, decoded.byteOffset, decoded.byteLength);
  }
  // A short result lives in Node's shared buffer pool, which must not be handed over: copied out of it.
  return new Uint8Array(decoded);
}
