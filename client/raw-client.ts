/** The openapi-fetch client every helper is built on, typed from the contract's `paths`. */
import type { Client } from 'openapi-fetch';
import type { paths } from '../generated/api.js';

/**
 * `'application/json'` selects the JSON media type where an operation also declares `text/event-stream` or
 * audio, so `data` is the JSON body; streaming and binary helpers pass `parseAs` explicitly.
 */
export type RawClient = Client<paths, 'application/json'>;

/** Per-call options every helper accepts. */
export interface CallOptions {
  /** Aborts the request (and, for streams, the body being read). */
  signal?: AbortSignal;
}
