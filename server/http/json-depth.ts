/**
 * A limit on how deeply a JSON body may nest. Deep nesting has no use in this API (the deepest real tool
 * schemas are a few dozen levels), and code that walks a parsed body recursively (JSON.stringify towards an
 * upstream, schema validation, codecs) would overflow its stack on ten thousand levels: refusing such a body
 * right after parsing keeps every later stage safe.
 *
 * The walk is iterative and visits each object and array once (strings are not scanned), so a 25 MiB prompt
 * costs nothing here, and it runs on the parsed value rather than the raw bytes so that body-parser can keep
 * decoding the body chunk by chunk as it arrives.
 */
import type { RequestHandler } from 'express';
import { ApiError } from '../core/api-error.js';

export const MAX_JSON_DEPTH = 256;

/** Whether `value` nests objects and arrays deeper than `maxDepth` levels. */
export function nestsDeeperThan(value: unknown, maxDepth: number): boolean {
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 1 }];
  while (stack.length > 0) {
    const { value: current, depth } = stack.pop()!;
    if (typeof current !== 'object' || current === null) {
      continue;
    }
    if (depth > maxDepth) {
      return true;
    }
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      if (typeof child === 'object' && child !== null) {
        stack.push({ value: child, depth: depth + 1 });
      }
    }
  }
  return false;
}

export function jsonDepthLimit(maxDepth = MAX_JSON_DEPTH): RequestHandler {
  return (req, _res, next) => {
    if (typeof req.body === 'object' && req.body !== null && nestsDeeperThan(req.body, maxDepth)) {
      next(new ApiError(400, `The JSON body nests deeper than ${maxDepth} levels.`, { code: 'nesting_too_deep' }));
      return;
    }
    next();
  };
}
