/**
 * What every request gets before anything else runs, in one middleware (each Express layer costs a router
 * step per request; these four were four layers): its id, on every response (request-id.ts); HEAD wherever
 * GET works (RFC 9110: the contract lists GET operations only, so a HEAD request is validated and handled as
 * the GET it mirrors, and Node, which knows it was HEAD, sends the headers without the body);
 * its call record (usage/call-record.ts); and one access line when the response ends or the client goes away
 * (method, path, status, duration, request id, key id, model — what an operator greps for; never headers or
 * bodies). With tracing on (observability/), the rest of the request runs inside its server span.
 */
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import { countForegroundRequest } from '../engines/pool/foreground.js';
import { observers } from '../observability/hooks.js';
import { type CostOf, startCallRecord } from '../usage/call-record.js';
import type { UsageRecorder } from '../usage/usage-recorder.js';
import { newRequestId, setRequestIdHeaders } from './request-id.js';

export interface RequestStartOptions {
  logger: Logger;
  usage: UsageRecorder;
  now?: () => number;
  /** Each call's cost, written in its usage record (limits/prices.ts). */
  costOf?: CostOf;
}

export function requestStart(options: RequestStartOptions): RequestHandler {
  const { logger, usage, now, costOf } = options;
  return (req, res, next) => {
    const startedAt = performance.now();
    // Background writers slow down while requests arrive (engines/pool/foreground.ts).
    countForegroundRequest();
    const method = req.method;
    const id = newRequestId();
    res.locals.requestId = id;
    setRequestIdHeaders(req, res, id);
    if (method === 'HEAD') {
      req.method = 'GET';
    }
    const call = startCallRecord(res, usage, now, startedAt, costOf);
    res.locals.call = call;
    res.once('close', () => {
      logger.info(
        {
          requestId: id,
          method,
          path: req.path,
          status: res.statusCode,
          ms: Math.round((performance.now() - startedAt) * 10) / 10,
          keyId: res.locals.apiKey?.id ?? null,
          model: call.model,
          // The client left before the answer was complete (a stream cut short, a disconnect).
          ...(res.writableFinished ? {} : { aborted: true }),
        },
        'request',
      );
    });
    const tracing = observers.tracing;
    if (tracing?.runRequest) {
      tracing.runRequest(req, res, id, next);
    } else {
      next();
    }
  };
}
