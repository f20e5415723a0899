/**
 * The OpenAI-compatible side of `upstream-http-client.ts`: `Authorization: Bearer <api_key>` (only when a key
 * is configured), every caller header except credentials, and error bodies in any of the shapes such servers
 * use (`{"error":{"message"}}`, `{"error":"…"}`, `{"message"}`, FastAPI's `{"detail"}`).
 */
import type { ProviderConfig } from '../../config.js';
import { createUpstreamHttpClient, type UpstreamHttpClient, type UpstreamProtocol } from '../upstream/http-client.js';

export type OpenAICompatibleConfig = Extract<ProviderConfig, { type: 'openai-compatible' }>;

const OPENAI_COMPATIBLE: UpstreamProtocol = {
  authHeaders: (apiKey) => ({ authorization: `Bearer ${apiKey}` }),
  // The caller's own credentials never reach the upstream, even when no key is configured.
  forwardsCallerHeader: (name) => name !== 'authorization',
  // OpenAI echoes a masked key ("Incorrect API key provided: sk-ab***xyz").
  maskedKey: /\b(?:sk|rk|pk)-[A-Za-z0-9_*.-]{4,}/g,
  errorBodyFields: ['error', 'message', 'detail'],
};

export function createOpenAICompatibleHttpClient(config: OpenAICompatibleConfig): UpstreamHttpClient {
  return createUpstreamHttpClient(config, OPENAI_COMPATIBLE);
}
