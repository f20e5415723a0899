/**
 * The JSON body parser: express.json with the body size limit, and the token budget of `json-token-budget.ts`
 * counted while the body arrives, so a body too costly to parse is refused before JSON.parse sees it. The same
 * count measures how deeply the body nests, so one nested too deeply is refused before it is parsed too, and the
 * depth limit (json-depth.ts) does not walk the parsed body again. A body
 * whose declared length is over the limit is refused before any of it is read: express.json would read all of
 * it, however large, before passing its 413 on; the error handler reads only a bounded rest (drain-early-answer.ts).
 *
 * A large body (from THREAD_PARSE_MIN_BYTES) is kept off the event loop: one of declared length, not compressed, in
 * UTF-8, is read here a chunk at a time into one buffer (`readLargeBody`) rather than joined at the end by
 * express.json; any other (compressed, or without a length) is read by express.json, whose check on the raw bytes
 * before decoding (`verify`) takes them away from it. Either way the bytes are then decoded and parsed in a body
 * thread (engines/body/body-pool.ts) unless they hold many small values for their size, with express.json's own
 * results and errors.
 */
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { ApiError } from '../core/api-error.js';
import { parseJsonBytes, type ParseJsonOutput } from '../engines/body/body-jobs.js';
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
    if (error instanceof ParseInThread) {
      parseBytesInThread(req, res, next, error.body);
    } else {
      next(error);
    }
  };
  return (req, res, next) => {
    const identity = (req.headers['content-encoding'] ?? 'identity').toLowerCase() === 'identity';
    // Only a body that express.json reads right below is tapped: a listener on any other body would start it
    // flowing with nobody else reading it.
    if (identity && req.is(JSON_TYPES)) {
      const length = Number(req.headers['content-length']);
      if (length > limit) {
        next(new ApiError(413, `The request body exceeds the limit of ${limit} bytes.`, { code: 'request_too_large' }));
        return;
      }
      if (length >= THREAD_PARSE_MIN_BYTES && isUtf8(req.headers['content-type'])) {
        readLargeBody(req, res, next, length, maxTokens);
        return;
      }
      const counter = createJsonTokenCounter(maxTokens);
      counters.set(req, counter);
      req.on('data', (chunk: Buffer) => counter.write(chunk));
    }
    parse(req, res, parsed(req, res, next));
  };
}

/** Whether a JSON body's declared charset is UTF-8 (or none, which means UTF-8). */
function isUtf8(contentType: string | undefined): boolean {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? '')?.[1]?.toLowerCase();
  return charset === undefined || charset === 'utf-8' || charset === 'utf8';
}

/** An error shaped as body-parser's (http-errors), which the error handler answers by its `type`. */
function bodyParserError(status: number, message: string, type: string, ErrorType = Error): Error {
  return Object.assign(new ErrorType(message), { status, statusCode: status, expose: true, type });
}

/**
 * Reads a large identity body of declared length itself, instead of express.json: each chunk is copied into one
 * buffer of that length as it arrives, so no read holds the loop longer than its chunk, where express.json
 * (raw-body) would join the chunks at the end in one copy of the whole body. Its token count and depth are
 * checked as in `verify`, then it is parsed in a thread or, for a body of many small values, in place (see
 * `THREAD_PARSE_MIN_BYTES_PER_VALUE`). The errors are express.json's: a client that goes away before the end is
 * `request aborted` (400).
 */
function readLargeBody(req: Request, res: Response, next: NextFunction, length: number, maxTokens: number): void {
  const counter = createJsonTokenCounter(maxTokens);
  // Its own ArrayBuffer, so the whole of it can be handed to a body thread without a copy.
  const body = Buffer.from(new ArrayBuffer(length));
  let received = 0;
  let ended = false;
  req.on('data', (chunk: Buffer) => {
    // The HTTP parser delivers exactly the declared length; more would be a bug, and is not copied.
    if (received + chunk.length <= length) {
      chunk.copy(body, received);
      counter.write(chunk);
    }
    received += chunk.length;
  });
  req.once('end', () => {
    ended = true;
    if (received !== length) {
      next(bodyParserError(400, 'request size did not match content length', 'request.size.invalid'));
      return;
    }
    if (counter.over) {
      next(tooManyJsonTokens(maxTokens));
      return;
    }
    if (counter.deepest > MAX_JSON_DEPTH) {
      next(nestingTooDeep(MAX_JSON_DEPTH));
      return;
    }
    depthMeasured.add(req);
    if (body.length >= counter.count * THREAD_PARSE_MIN_BYTES_PER_VALUE) {
      parseBytesInThread(req, res, next, body);
      return;
    }
    answerParse(req, next, parseJsonBytes({ bytes: body.buffer as ArrayBuffer, byteOffset: 0, byteLength: length }));
  });
  req.once('close', () => {
    if (!ended) {
      next(bodyParserError(400, 'request aborted', 'request.aborted'));
    }
  });
}

function parseBytesInThread(req: Request, res: Response, next: NextFunction, body: Buffer): void {
  const owner = (res.locals.apiKey as { id?: string } | undefined)?.id ?? req.ip ?? '';
  runInBodyThread('parseJson', body, { owner, signal: closedBy(res) }).then(
    (output) => answerParse(req, next, output),
    next,
  );
}

function answerParse(req: Request, next: NextFunction, output: ParseJsonOutput): void {
  if ('value' in output) {
    req.body = output.value;
    next();
    return;
  }
  // The error express.json gives for the same bytes: the error handler answers it as `invalid_json`.
  next(bodyParserError(400, output.syntaxError, 'entity.parse.failed', SyntaxError));
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
