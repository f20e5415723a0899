/**
 * The Anthropic side of `upstream-http-client.ts` (the Anthropic API or a gateway that speaks it):
 * `x-api-key: <api_key>` (only when a key is configured), `anthropic-version` from config, then the configured
 * `headers`. A call may add `anthropic-beta` (the caller's, for passthrough) and nothing else: the caller's own
 * credentials never reach the upstream. Anthropic's `anthropic-ratelimit-*` response headers are kept.
 *
 * Error bodies are Anthropic's envelope (`{"type":"error","error":{"type","message"}}`) or a gateway's
 * `{"error"}`/`{"message"}`. Anthropic's own `529 overloaded_error` becomes 503: the upstream is busy, not broken.
 */
import type { ProviderConfig } from '../../config.js';
import { UpstreamError } from '../../core/api-error.js';
import { createUpstreamHttpClient, type UpstreamHttpClient } from '../upstream/http-client.js';

export type AnthropicConfig = Extract<ProviderConfig, { type: 'anthropic' }>;

/** Anthropic's "overloaded" status (https://docs.anthropic.com/en/api/errors). */
const OVERLOADED_STATUS = 529;

export function createAnthropicHttpClient(config: AnthropicConfig): UpstreamHttpClient {
  return createUpstreamHttpClient(config, {
    authHeaders: (apiKey) => ({ 'x-api-key': apiKey }),
    defaultHeaders: { 'anthropic-version': config.anthropic_version },
    forwardsCallerHeader: (name) => name === 'anthropic-beta',
    extraResponseHeaders: /^anthropic-ratelimit-./,
    maskedKey: /\bsk-ant-[A-Za-z0-9_*.-]{4,}/g,
    errorBodyFields: ['error', 'message'],
    statusError(status, message, retryAfter) {
      if (status !== OVERLOADED_STATUS) {
        return undefined;
      }
      const detail = message ? `: ${message.slice(0, 500)}` : '';
      return new UpstreamError(config.id, 503, status, `Upstream ${config.id} is overloaded (${status})${detail}`, {
        headers: retryAfter ? { 'retry-after': retryAfter } : {},
      });
    },
  });
}
