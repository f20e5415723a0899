/**
 * How each search API authenticates and words its errors, for the one upstream HTTP client:
 * SearXNG (https://docs.searxng.org/dev/search_api.html) has no key of its own (a key configured anyway is sent
 * as a bearer token, for instances behind an authenticating proxy); Brave Search
 * (https://api-dashboard.search.brave.com/app/documentation/web-search/get-started) takes
 * `X-Subscription-Token`; Tavily (https://docs.tavily.com/documentation/api-reference/endpoint/search) a bearer
 * `tvly-` key. No caller header is ever forwarded to a search API.
 */
import type { UpstreamProtocol } from '../upstream/http-client.js';

const NO_CALLER_HEADERS = () => false;

export const SEARXNG_PROTOCOL: UpstreamProtocol = {
  authHeaders: (apiKey) => ({ authorization: `Bearer ${apiKey}` }),
  defaultHeaders: { accept: 'application/json' },
  forwardsCallerHeader: NO_CALLER_HEADERS,
  maskedKey: /(?!)/g,
  errorBodyFields: ['error', 'message'],
};

export const BRAVE_PROTOCOL: UpstreamProtocol = {
  authHeaders: (apiKey) => ({ 'x-subscription-token': apiKey }),
  defaultHeaders: { accept: 'application/json' },
  forwardsCallerHeader: NO_CALLER_HEADERS,
  maskedKey: /(?!)/g,
  // {"type":"ErrorResponse","error":{"code":"…","detail":"…","status":429}}
  errorBodyFields: ['message', 'detail'],
};

export const TAVILY_PROTOCOL: UpstreamProtocol = {
  authHeaders: (apiKey) => ({ authorization: `Bearer ${apiKey}` }),
  forwardsCallerHeader: NO_CALLER_HEADERS,
  // Tavily keys start `tvly-`; its error bodies are {"detail":{"error":"…"}}.
  maskedKey: /\btvly-[A-Za-z0-9_*.-]{4,}/g,
  errorBodyFields: ['detail', 'error', 'message'],
};
