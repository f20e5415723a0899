/**
 * Every request's id, set before anything else runs (request-start.ts), so every response (401s, 404s,
 * errors) carries it: `x-svc-request-id`, the same value in `x-request-id` (read by the OpenAI SDK) and, on
 * `/anthropic`, in `request-id` (read by the Anthropic SDK). Incoming ids are not trusted: the id names our
 * usage record.
 */
import type { Request, Response } from 'express';
import { apiFamilyOf } from './api-family.js';
import { timeOrderedId } from '../core/random-id.js';

/**
 * `req_` and 32 hex characters that sort by creation time (milliseconds first, then 80 random bits): the usage
 * table indexes request ids, and ids that grow append to the end of that index, where random ids land on a
 * random page of it each time (a usage row cost ~11 µs to insert with random ids, ~3.8 with ordered ones, and
 * the random pages grow costlier as the table outgrows the page cache).
 */
export function newRequestId(): string {
  return timeOrderedId('req');
}

export function setRequestIdHeaders(req: Request, res: Response, id: string): void {
  res.setHeader('x-svc-request-id', id);
  res.setHeader('x-request-id', id);
  if (apiFamilyOf(req.path) === 'anthropic') {
    res.setHeader('request-id', id);
  }
}
