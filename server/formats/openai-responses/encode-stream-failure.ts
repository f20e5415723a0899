/**
 * A failure after the stream has started → `response.failed` then `error`, continuing the sequence numbers
 * (a passed-through stream gets the `error` event only).
 *
 * The route calls this when the provider throws mid-stream (before that, it answers with a plain HTTP error).
 * The failed response carries the output produced so far, with unfinished items marked `incomplete`. Only an
 * `ApiError`'s own message reaches the caller; anything else is reported generically (the route logs it).
 */
import { ApiError } from '../../core/api-error.js';
import type { ResponsesStreamState } from './encode-stream.js';
import { buildResponseObject } from './response-object.js';
import type { OutputItem, ResponsesWireEvent } from './wire-types.js';

export function encodeStreamFailure(
  error: unknown,
  state: ResponsesStreamState,
): [ResponsesWireEvent, ResponsesWireEvent] {
  const known = error instanceof ApiError ? error : undefined;
  const message = known?.message ?? 'The response failed because of an internal error.';
  const response = buildResponseObject(state.meta, {
    status: 'failed',
    output: state.output.map(unfinishedAsIncomplete),
    usage: null,
    error: { code: known?.status === 429 ? 'rate_limit_exceeded' : 'server_error', message },
  });
  const failed: ResponsesWireEvent = {
    event: 'response.failed',
    data: { type: 'response.failed', sequence_number: state.nextSequenceNumber++, response },
  };
  return [failed, errorEvent(known, message, state.nextSequenceNumber++)];
}

/**
 * A stream passed through from an upstream that serves Responses itself fails: the upstream owns the response
 * object, so only the `error` event is added, numbered after the last event relayed.
 */
export function encodePassthroughStreamFailure(error: ApiError, lastEvent: unknown): ResponsesWireEvent[] {
  const last = (lastEvent as { sequence_number?: unknown } | undefined)?.sequence_number;
  return [errorEvent(error, error.message, typeof last === 'number' ? last + 1 : 0)];
}

function errorEvent(known: ApiError | undefined, message: string, sequenceNumber: number): ResponsesWireEvent {
  return {
    event: 'error',
    data: {
      type: 'error',
      sequence_number: sequenceNumber,
      code: known ? (known.code ?? known.type) : 'server_error',
      message,
      param: known?.param ?? null,
    },
  };
}

function unfinishedAsIncomplete(item: OutputItem): OutputItem {
  const copy = structuredClone(item);
  if (copy.type !== 'reasoning' && copy.status === 'in_progress') {
    copy.status = 'incomplete';
  }
  return copy;
}
