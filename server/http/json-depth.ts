/**
 * A limit on how deeply a JSON body may nest, checked on the raw bytes before they are parsed. Deep nesting
 * has no use in this API (the deepest real tool schemas are a few dozen levels), and code that walks a parsed
 * body recursively (JSON.stringify towards an upstream, token counting, schema validation) would overflow its
 * stack on ten thousand levels: refusing such a body at the door keeps every later stage safe.
 */
export const MAX_JSON_DEPTH = 256;
/** The body-parser error `type` of a body nested deeper than the limit; error-handler.ts renders it as a 400. */
export const NESTING_TOO_DEEP = 'entity.too.deep';

const OPEN_OBJECT = 0x7b; // {
const OPEN_ARRAY = 0x5b; // [
const CLOSE_OBJECT = 0x7d; // }
const CLOSE_ARRAY = 0x5d; // ]
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \

/** Throws a body-parser-style error (`type` = NESTING_TOO_DEEP) when `body` nests deeper than `maxDepth`. */
export function checkJsonDepth(body: Uint8Array, maxDepth = MAX_JSON_DEPTH): void {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < body.length; index++) {
    const byte = body[index];
    if (inString) {
      if (byte === BACKSLASH) {
        index++;
      } else if (byte === QUOTE) {
        inString = false;
      }
    } else if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      if (++depth > maxDepth) {
        throw Object.assign(new Error(`The JSON body nests deeper than ${maxDepth} levels.`), { type: NESTING_TOO_DEEP, status: 400 });
      }
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
      depth--;
    }
  }
}
