/**
 * express-openapi-validator coerces query values to numbers for numeric parameters, and a value that coerces
 * to ±Infinity (`limit=1e999`, `limit=Infinity`) slips past its `minimum`/`maximum` checks. No parameter of
 * the contract takes an infinite number, so any that reaches the handlers is refused here as a 400.
 */
import type { RequestHandler } from 'express';
import { ApiError } from '../core/api-error.js';

export function finiteQueryNumbers(): RequestHandler {
  return (req, _res, next) => {
    for (const [name, value] of Object.entries(req.query)) {
      if (typeof value === 'number' && !Number.isFinite(value)) {
        next(new ApiError(400, `/query/${name} must be a finite number`, { param: name }));
        return;
      }
    }
    next();
  };
}
