/**
 * Every request's id, set before anything else runs (request-start.ts), so every response (401s, 404s,
 * errors) carries it: `x-svc-request-id`, the same value in `x-request-id` (read by the OpenAI SDK) and, on
 * `/anthropic`, in `request-id` (read by the Anthropic SDK). Incoming ids are not trusted: the id names our
 * usage record.
 */
import type { Request, Response } from 'express';
import { apiFamilyOf } from './api-family.js';
import { randomId } from '../core/random-id.js';

export function newRequestId(): string {
  return randomId('req');
}

export function setRequestIdHeaders(req: Request, res: Response, id: string): void {
  res.setHeader('x-svc-request-id', id);
  res.setHeader('x-request-id', id);
  if (apiFamilyOf(req.path) === 'anthropic') {
    res.setHeader('request-id', id);
  }
}
