/**
 * A chat-completions stream that fails after it started ends with one `data: {"error": …}` frame in the OpenAI
 * envelope (what openai-node raises as an APIError), and no `[DONE]`.
 */
import type { ApiError } from '../../core/api-error.js';
import type { WireEvent } from '../../core/wire-event.js';
import { openAiErrorEnvelope } from '../error-envelopes.js';

export function encodeChatStreamFailure(error: ApiError): WireEvent[] {
  return [{ data: openAiErrorEnvelope(error) }];
}
