/**
 * A limit on how deeply a JSON body may nest. Deep nesting has no use in this API (the deepest real tool
 * schemas are a few dozen levels), and code that walks a parsed body recursively (JSON.stringify towards an
 * upstream, schema validation, codecs) would overflow its stack on ten thousand levels: refusing such a body
 * right after parsing keeps every later stage safe.
 *
 * A JSON body read by json-body.ts has its depth measured on its raw bytes while it arrives (by the token
 * counter, json-token-budget.ts) and is refused there, before parsing. This walk is the fallback for any other
 * body that reaches here as an object: it is iterative and visits each object and array once (strings are not
 * scanned), but on the largest accepted body it still cost as much as parsing it, in one block of the event loop.
 */
import type { RequestHandler } from 'express';
import { ApiError } from '../core/api-error.js';

export const MAX_JSON_DEPTH = 256;

/**
 * Requests whose JSON body's depth was already measured on its raw bytes while it arrived (json-body.ts): the
 * walk below is skipped for them, so the largest accepted body pays for its depth check in the reads, not in one
 * block after parsing.
 */
export const depthMeasured = new WeakSet<object>();

export function nestingTooDeep(maxDepth: number): ApiError {
  return new ApiError(400, `The JSON body nests deeper than ${maxDepth} levels.`, { code: 'nesting_too_deep' });
}

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
    if (
      !depthMeasured.has(req) &&
      typeof req.body === 'object' &&
      req.body !== null &&
      nestsDeeperThan(req.body, maxDepth)
    ) {
      next(nestingTooDeep(maxDepth));
      return;
    }
    next();
  };
}
