/**
 * Canonical finish reason → Responses `status` and `incomplete_details`.
 *
 * Responses has no finish reason: a cut-off answer is `status: "incomplete"` with the reason, and a normal
 * stop or a tool call is `completed` (callers see tool calls as `function_call` output items).
 */
import type { FinishReason } from '../../core/chat.js';
import type { ResponseObject } from './wire-types.js';

export interface ResponseOutcome {
  status: 'completed' | 'incomplete' | 'failed';
  incompleteDetails: ResponseObject['incomplete_details'];
  error: ResponseObject['error'];
}

export function mapFinishReason(finishReason: FinishReason): ResponseOutcome {
  switch (finishReason) {
    case 'length':
      return { status: 'incomplete', incompleteDetails: { reason: 'max_output_tokens' }, error: null };
    case 'content-filter':
      return { status: 'incomplete', incompleteDetails: { reason: 'content_filter' }, error: null };
    case 'error':
      return {
        status: 'failed',
        incompleteDetails: null,
        error: { code: 'server_error', message: 'The model stopped with an error.' },
      };
    case 'stop':
    case 'tool-calls':
    case 'other':
      return { status: 'completed', incompleteDetails: null, error: null };
  }
}
