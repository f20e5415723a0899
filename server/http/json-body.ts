/**
 * The JSON body parser: express.json with the body size limit, and the token budget of `json-token-budget.ts`
 * counted while the body arrives, so a body too costly to parse is refused before JSON.parse sees it. The same
 * count measures how deeply the body nests, so one nested too deeply is refused before it is parsed too, and the
 * depth limit (json-depth.ts) does not walk the parsed body again. A body
 * whose declared length is over the limit is refused before any of it is read: express.json would read all of
 * it, however large, before passing its 413 on; the error handler reads only a bounded rest (drain-early-answer.ts).
 *
 * A large body is decoded and parsed in a thread (engines/body/body-pool.ts), not here: express.json still reads it (its
 * limit, charset, compression and errors are unchanged), and the check that runs on its raw bytes before decoding
 * (`verify`) hands those bytes on instead of letting express.json decode and parse them on the event loop.
 */
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { ApiError } from '../core/api-error.js';
import { runInBodyThread } from '../engines/body/body-pool.js';
import { depthMeasured, MAX_JSON_DEPTH, nestingTooDeep } from './json-depth.js';
import {
  createJsonTokenCounter,
  MAX_JSON_TOKENS,
  tooManyJsonTokens,
  type JsonTokenCounter,
} from './json-token-budget.js';

const JSON_TYPES = ['application/json', 'application/*+json'];

/**
 * Bodies from this size on are parsed in a thread, when they hold few values for their size (below). Below it,
 * decoding and parsing cost at most ~2 ms in place, less than the round trip to a thread.
 */
export const THREAD_PARSE_MIN_BYTES = 1024 * 1024;
/**
 * A body goes to the thread only when it has at least this many bytes per key or value. Taking the value back
 * from the thread (structured clone) costs more per value than JSON.parse does in place (~0.07 against ~0.03
 * µs), and less per byte (~0.5 against ~1.75 ms per MiB, UTF-8 decoding included): the thread wins when the
 * body has fewer than ~32,000 values per MiB, long strings (base64 media, documents) rather than many small
 * values (bench/README.md, body parsing). The token budget bounds what a body of small values costs in place.
 */
export const THREAD_PARSE_MIN_BYTES_PER_VALUE = 32;

/** Thrown by `verify` to take a large body's raw bytes past express.json's decoding and parsing. */
class ParseInThread extends Error {
  constructor(readonly body: Buffer) {
    super('parsed in a thread');
  }
}

export function jsonBody(limit: number, maxTokens = MAX_JSON_TOKENS): RequestHandler {
  const counters = new WeakMap<object, JsonTokenCounter>();
  const parse = express.json({
    limit,
    type: JSON_TYPES,
    verify: (req, _res, body, encoding) => {
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
      if (
        body.length >= THREAD_PARSE_MIN_BYTES &&
        body.length >= counter.count * THREAD_PARSE_MIN_BYTES_PER_VALUE &&
        (encoding === 'utf-8' || encoding === 'utf8')
      ) {
        throw new ParseInThread(body);
      }
    },
  });
  const parsed = (req: Request, res: Response, next: NextFunction) => (error?: unknown) => {
    if (!(error instanceof ParseInThread)) {
      next(error);
      return;
    }
    const owner = (res.locals.apiKey as { id?: string } | undefined)?.id ?? req.ip ?? '';
    runInBodyThread('parseJson', error.body, { owner, signal: closedBy(res) }).then((output) => {
      if ('value' in output) {
        req.body = output.value;
        next();
        return;
      }
      // The error express.json gives for the same bytes: the error handler answers it as `invalid_json`.
      next(
        Object.assign(new SyntaxError(output.syntaxError), {
          status: 400,
          statusCode: 400,
          expose: true,
          type: 'entity.parse.failed',
        }),
      );
    }, next);
  };
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
    parse(req, res, parsed(req, res, next));
  };
}

/** Fires when the client goes away before the answer: its body's parse is stopped (or leaves the queue). */
function closedBy(res: Response): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) {
      controller.abort(new ApiError(499, 'The client closed the request.', { code: 'client_closed_request' }));
    }
  });
  return controller.signal;
}
