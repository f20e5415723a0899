/**
 * The scope of one call, built once at the edge (routes/mount-operations.ts, for every operation behind the
 * key check) from what the middleware put on `res.locals`: the request id, the caller's key, the call's usage
 * record, the abort signal (the client left, or the server shut down) and our base URL as the caller reaches it.
 * Everything below `routes/` that computes takes this object, not Express's `req`/`res`, so it runs (and is
 * tested) without a server; only the functions that send an answer take `res`.
 *
 * `Express.Locals` is typed here by declaration merging, so `res.locals.call` needs no cast anywhere.
 */
import type { Request, Response } from 'express';
import type { ApiKeyRecord } from '../storage/key-store.js';
import type { CallRecord } from '../usage/call-record.js';
import { abortOnClose } from './abort-on-close.js';

declare global {
  namespace Express {
    interface Locals {
      /** Set first, by http/request-start.ts. */
      requestId: string;
      /** The usage record of this request, by http/request-start.ts. */
      call: CallRecord;
      /** The verified key, by auth/authenticate.ts; absent on the public paths. */
      apiKey?: ApiKeyRecord;
      /** The call scope, by routes/mount-operations.ts, on operations behind the key check. */
      scope?: CallScope;
    }
  }
}

export interface CallScope {
  readonly requestId: string;
  readonly key: ApiKeyRecord;
  readonly call: CallRecord;
  /** Fires when the client goes away before the answer is complete, or when the shutdown grace period ends. */
  readonly signal: AbortSignal;
  /** Our base URL as the caller reaches it (the configured public URL, else the request's protocol and host). */
  readonly baseUrl: string;
  /** Adds a header to the answer, while it has not started (a stand-in model's warning). */
  setHeader(name: string, value: string): void;
}

/** What the edge needs besides the request: the shutdown signal and the configured public URL. */
export interface ScopeSettings {
  shutdownSignal?: AbortSignal;
  publicUrl?: string;
}

/** Our base URL: the configured public URL, else the request's own protocol and host. */
export function baseUrlOf(
  req: Pick<Request, 'protocol'> & { get(name: 'host'): string | undefined },
  publicUrl: string | undefined,
): string {
  return publicUrl ? publicUrl.replace(/\/+$/, '') : `${req.protocol}://${req.get('host')}`;
}

/**
 * The scope of an authenticated request. The signal and the base URL are made on first use: most calls of
 * a cheap operation (a list, a lookup) need neither, and a signal costs a listener on the response.
 */
export function buildCallScope(req: Request, res: Response, settings: ScopeSettings): CallScope {
  const key = res.locals.apiKey;
  if (!key) {
    throw new Error('a call scope is built only behind the key check');
  }
  let signal: AbortSignal | undefined;
  let baseUrl: string | undefined;
  return {
    requestId: res.locals.requestId,
    key,
    call: res.locals.call,
    get signal() {
      signal ??= abortOnClose(res, settings.shutdownSignal);
      return signal;
    },
    get baseUrl() {
      baseUrl ??= baseUrlOf(req, settings.publicUrl);
      return baseUrl;
    },
    setHeader(name, value) {
      if (!res.headersSent) {
        res.setHeader(name, value);
      }
    },
  };
}

/** The scope the edge built for this request; an operation without one is a wiring mistake, not a caller's. */
export function scopeOf(res: Response): CallScope {
  const scope = res.locals.scope;
  if (!scope) {
    throw new Error('no call scope: the operation was not mounted behind routes/mount-operations.ts');
  }
  return scope;
}
