/**
 * One access line per request, when its response ends (or the client goes away): method, path, status,
 * duration, request id, key id and model — what an operator greps for. Never headers or bodies.
 */
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import type { CallRecord } from '../usage/call-record.js';

export function accessLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const startedAt = performance.now();
    const method = req.method;
    res.once('close', () => {
      const call = res.locals.call as CallRecord | undefined;
      logger.info(
        {
          requestId: res.locals.requestId as string,
          method,
          path: req.path,
          status: res.statusCode,
          ms: Math.round((performance.now() - startedAt) * 10) / 10,
          keyId: (res.locals.apiKey as { id?: string } | undefined)?.id ?? null,
          model: call?.model ?? null,
          // The client left before the answer was complete (a stream cut short, a disconnect).
          ...(res.writableFinished ? {} : { aborted: true }),
        },
        'request',
      );
    });
    next();
  };
}
