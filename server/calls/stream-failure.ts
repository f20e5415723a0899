/**
 * How a failure after a stream started is reported and recorded, for every streamed call (translated or
 * passed through): a shutdown is a 503 `shutting_down`, the client leaving is recorded as 499 (nobody is left
 * to read the error event), anything else keeps its own status.
 */
import { ApiError } from '../core/api-error.js';
import type { CallContext } from '../core/call-context.js';
import { toApiError } from '../http/error-handler.js';

export function streamFailure(
  call: { context: CallContext; shutdown?: AbortSignal },
  error: unknown,
): { error: ApiError; status: number } {
  if (call.shutdown?.aborted) {
    return {
      error: new ApiError(503, 'The server is shutting down.', { code: 'shutting_down', cause: error, expected: true }),
      status: 503,
    };
  }
  const apiError = toApiError(error);
  return { error: apiError, status: call.context.signal.aborted ? 499 : apiError.status };
}
