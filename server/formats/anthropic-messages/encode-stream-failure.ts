/**
 * A Messages stream that fails after it started ends with Anthropic's `event: error` in its envelope (what
 * the Anthropic SDK raises), whether the stream was translated or passed through.
 */
import type { ApiError } from '../../core/api-error.js';
import type { WireEvent } from '../../core/wire-event.js';
import { anthropicErrorEnvelope } from '../error-envelopes.js';

export function encodeMessagesStreamFailure(error: ApiError, requestId: string): WireEvent[] {
  return [{ event: 'error', data: anthropicErrorEnvelope(error, requestId) }];
}
