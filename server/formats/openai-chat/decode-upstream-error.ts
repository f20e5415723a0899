/**
 * An `error` object inside an upstream body that arrived with a 2xx status (vLLM and OpenRouter report
 * failures mid-stream this way) → `UpstreamError`.
 */
import { UpstreamError } from '../../core/api-error.js';
import type { UpstreamErrorBody } from './wire-types.js';

export function decodeUpstreamError(provider: string, error: UpstreamErrorBody | string): UpstreamError {
  const message =
    typeof error === 'string' ? error : typeof error.message === 'string' ? error.message : JSON.stringify(error);
  const code = typeof error === 'object' ? Number(error.code) : Number.NaN;
  if (Number.isInteger(code) && code >= 400 && code <= 599) {
    return UpstreamError.fromStatus(provider, code, message);
  }
  return new UpstreamError(provider, 502, null, `Upstream ${provider} failed: ${message.slice(0, 500)}`);
}
