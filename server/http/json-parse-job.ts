/**
 * What the JSON parse thread (json-parse-pool.ts) does with a body's raw bytes: exactly what express.json
 * (body-parser 2, strict mode, charset utf-8) does with them on the main thread — decode as UTF-8 dropping a
 * leading BOM, an empty body is `{}`, a body not starting with `{` or `[` is refused with the message JSON.parse
 * would give, then JSON.parse — so a body parsed in the thread is the same value, or fails with the same message,
 * as one parsed in place. A syntax error is an answer, not a failure of the job: the main thread turns it into
 * body-parser's own error, which the error handler answers as `invalid_json`.
 */

export interface ParseJsonInput {
  bytes: ArrayBuffer;
  byteOffset: number;
  byteLength: number;
}

export type ParseJsonOutput = { value: unknown } | { syntaxError: string };

export type JsonParseJobs = {
  parseJson(input: ParseJsonInput): Promise<ParseJsonOutput>;
};

const FIRST_NON_WHITESPACE = /^[\x20\x09\x0a\x0d]*([^\x20\x09\x0a\x0d]|$)/;

export function parseJsonBytes(input: ParseJsonInput): ParseJsonOutput {
  let text = Buffer.from(input.bytes, input.byteOffset, input.byteLength).toString('utf8');
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
