/**
 * The JSON body parser: express.json with the body size limit, and the token budget of `json-token-budget.ts`
 * counted while the body arrives, so a body too costly to parse is refused before JSON.parse sees it. The same
 * count measures how deeply the body nests, so one nested too deeply is refused before it is parsed too, and the
 * depth limit (json-depth.ts) does not walk the parsed body again. A body
 * whose declared length is over the limit is refused before any of it is read: express.json would read all of
 * it, however large, before passing its 413 on; the error handler reads only a bounded rest (drain-early-answer.ts).
 */
import express, { type RequestHandler } from 'express';
import { ApiError } from '../core/api-error.js';
import { depthMeasured, MAX_JSON_DEPTH, nestingTooDeep } from './json-depth.js';
import {
  createJsonTokenCounter,
  MAX_JSON_TOKENS,
  tooManyJsonTokens,
  type JsonTokenCounter,
} from './json-token-budget.js';

const JSON_TYPES = ['application/json', 'application/*+json'];

export function jsonBody(limit: number, maxTokens = MAX_JSON_TOKENS): RequestHandler {
  const counters = new WeakMap<object, JsonTokenCounter>();
  const parse = express.json({
    limit,
    type: JSON_TYPES,
    verify: (req, _res, body) => {
      let counter = counters.get(req);
      if (!counter) {
        // A compressed body: its decoded bytes exist only now, in one piece (no real client compresses).
        counter = createJsonTokenCounter(maxTokens);
        counter.write(body);
      }
      if (counter.over) {
        throw tooManyJsonTokens(maxTokens);
      }
      if (counter.deepest > MAX_JSON_DEPTH) {
        throw nestingTooDeep(MAX_JSON_DEPTH);
      }
      depthMeasured.add(req);
    },
  });
  return (req, res, next) => {
    const identity = (req.headers['content-encoding'] ?? 'identity').toLowerCase() === 'identity';
    // Only a body that express.json reads right below is tapped: a listener on any other body would start it
    // flowing with nobody else reading it.
    if (identity && req.is(JSON_TYPES)) {
      if (Number(req.headers['content-length']) > limit) {
        next(new ApiError(413, `The request body exceeds the limit of ${limit} bytes.`, { code: 'request_too_large' }));
        return;
      }
      const counter = createJsonTokenCounter(maxTokens);
      counters.set(req, counter);
      req.on('data', (chunk: Buffer) => counter.write(chunk));
    }
    parse(req, res, next);
  };
}
