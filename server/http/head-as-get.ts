/**
 * HEAD wherever GET works (RFC 9110): the contract lists GET operations only, so a HEAD request is validated
 * and handled as the GET it mirrors. Node already knows the request was HEAD and sends the headers
 * (Content-Length included) without the body.
 */
import type { RequestHandler } from 'express';

export function headAsGet(): RequestHandler {
  return (req, _res, next) => {
    if (req.method === 'HEAD') {
      req.method = 'GET';
    }
    next();
  };
}
