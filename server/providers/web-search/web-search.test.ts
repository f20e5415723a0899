import type { ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sendJson } from '../../../test/fakes/answers.js';
import { byPath, startFakeUpstream, type FakeUpstream } from '../../../test/fakes/fake-upstream.js';
import type { CallContext, CallWarning } from '../../core/call-context.js';
import type { Provider, SearchCallOptions } from '../../core/models.js';
import type { WebSearchProviderConfig } from './index.js';
import { createWebSearchProvider } from './index.js';
import { rejection } from '../../../test/helpers/rejection.js';

const NOW = Date.parse('2026-03-01T00:00:00Z');
let upstream: FakeUpstream;
let provider: Provider | undefined;
let warnings: CallWarning[];

const json =
  (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  (_request: unknown, res: ServerResponse) =>
    sendJson(res, status, JSON.stringify(body), headers);
const context = (): CallContext => ({
  signal: AbortSignal.timeout(10_000),
  requestId: 'req_1',
  warn: (warning) => warnings.push(warning),
});
const options = (extra: Partial<SearchCallOptions> = {}): SearchCallOptions => ({
  query: 'node lts',
  maxResults: 5,
  keyId: 'key_1',
  ...extra,
});

function model(type: WebSearchProviderConfig['type'], modelId = 'web', timeout = 5_000) {
  const config = {
    id: type,
    type,
    base_url: `${upstream.origin}/api`,
    api_key: type === 'searxng' ? undefined : 'tvly-secret-0123456789',
    timeout_ms: timeout,
    max_connections: 4,
    headers: {},
  } as WebSearchProviderConfig;
  provider = createWebSearchProvider(config, { now: () => NOW });
  return provider.models.search!(modelId);
}

beforeAll(async () => {
  upstream = await startFakeUpstream();
});
beforeEach(() => {
  upstream.requests.length = 0;
  warnings = [];
});
afterEach(async () => {
  await provider?.close?.();
  provider = undefined;
});
afterAll(() => upstream.close());

/** SearXNG's documented JSON answer (https://docs.searxng.org/dev/search_api.html, format=json). */
const SEARXNG_ANSWER = {
  query: 'node lts',
  number_of_results: 0,
  results: [
    {
      url: 'https://nodejs.org/en/about/previous-releases',
      title: 'Node.js <b>Releases</b>',
      content: 'Major versions enter Active LTS &amp; then Maintenance.',
      engine: 'google',
      engines: ['google', 'bing'],
      score: 2.5,
      publishedDate: '2026-02-20T10:00:00',
      category: 'general',
    },
    {
      url: 'https://www.pinterest.com/pin/1',
      title: 'Pins',
      content: 'x',
      engine: 'bing',
      score: 1,
      publishedDate: null,
    },
    {
      url: 'https://old.example.org/lts',
      title: 'Old',
      content: 'from 2019',
      engine: 'duckduckgo',
      score: 0.5,
      publishedDate: '2019-01-01T00:00:00',
    },
    { url: 'javascript:alert(1)', title: 'Bad', content: 'not a page', engine: 'bing' },
  ],
  answers: [],
  corrections: [],
  infoboxes: [],
  suggestions: [],
  unresponsive_engines: [],
};

describe('SearXNG', () => {
  it('asks /search with format=json and normalises results: engine as source, dates in UTC, markup removed, filters applied', async () => {
    upstream.handle(byPath({ '/api/search': json(SEARXNG_ANSWER) }));
    const { results } = await model('searxng', 'news').search(
      options({ excludeDomains: ['pinterest.com'], recencyDays: 31 }),
      context(),
    );
    const url = new URL(upstream.requests[0]!.url, upstream.origin);
    expect(upstream.requests[0]!.method).toBe('GET');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      q: 'node lts',
      format: 'json',
      pageno: '1',
      time_range: 'month',
      categories: 'news',
    });
    expect(upstream.requests[0]!.headers.authorization).toBeUndefined();
    expect(results).toEqual([
      {
        title: 'Node.js Releases',
        url: 'https://nodejs.org/en/about/previous-releases',
        snippet: 'Major versions enter Active LTS & then Maintenance.',
        publishedAt: '2026-02-20T10:00:00.000Z',
        source: 'google',
        score: 2.5,
      },
    ]);
  });

  it('puts one include domain in the query as site: and keeps only its hosts', async () => {
    upstream.handle(byPath({ '/api/search': json(SEARXNG_ANSWER) }));
    const { results } = await model('searxng').search(options({ includeDomains: ['nodejs.org'] }), context());
    expect(new URL(upstream.requests[0]!.url, upstream.origin).searchParams.get('q')).toBe('node lts site:nodejs.org');
    expect(results.map((result) => result.url)).toEqual(['https://nodejs.org/en/about/previous-releases']);
  });

  it('maps an instance without the json format (403) to 502', async () => {
    upstream.handle(
      byPath({
        '/api/search': (_request, res) =>
          void res.writeHead(403, { 'content-type': 'text/html' }).end('<h1>Forbidden</h1>'),
      }),
    );
    const error = await rejection(model('searxng').search(options(), context()));
    expect(error.status).toBe(502);
  });
});

/** Brave's documented web search answer (https://api-dashboard.search.brave.com/app/documentation/web-search/responses). */
const BRAVE_ANSWER = {
  type: 'search',
  query: { original: 'node lts' },
  web: {
    type: 'search',
    results: [
      {
        type: 'search_result',
        title: 'Node.js — Run JavaScript Everywhere',
        url: 'https://nodejs.org/en',
        description: 'Node.js® is a <strong>JavaScript</strong> runtime.',
        page_age: '2026-02-27T08:00:00',
        age: '2 days ago',
        profile: { name: 'Node.js' },
        meta_url: { hostname: 'nodejs.org' },
      },
      {
        type: 'search_result',
        title: 'endoflife.date',
        url: 'https://endoflife.date/nodejs',
        description: 'Node.js 22 EOL 2027-04-30.',
      },
    ],
  },
};

describe('Brave', () => {
  it('sends the subscription token, count and freshness, and reads web.results', async () => {
    upstream.handle(byPath({ '/api/web/search': json(BRAVE_ANSWER) }));
    const { results } = await model('brave').search(options({ maxResults: 50, recencyDays: 7 }), context());
    const request = upstream.requests[0]!;
    expect(request.headers['x-subscription-token']).toBe('tvly-secret-0123456789');
    expect(Object.fromEntries(new URL(request.url, upstream.origin).searchParams)).toEqual({
      q: 'node lts',
      count: '20',
      freshness: 'pw',
    });
    expect(results).toEqual([
      {
        title: 'Node.js — Run JavaScript Everywhere',
        url: 'https://nodejs.org/en',
        snippet: 'Node.js® is a JavaScript runtime.',
        publishedAt: '2026-02-27T08:00:00.000Z',
        source: 'brave',
      },
      {
        title: 'endoflife.date',
        url: 'https://endoflife.date/nodejs',
        snippet: 'Node.js 22 EOL 2027-04-30.',
        publishedAt: undefined,
        source: 'brave',
      },
    ]);
  });

  it('answers a query with no web section with no results', async () => {
    upstream.handle(byPath({ '/api/web/search': json({ type: 'search', query: { original: 'zzz' } }) }));
    expect((await model('brave').search(options(), context())).results).toEqual([]);
  });

  it('passes a rate limit through as 429 with its Retry-After', async () => {
    upstream.handle(
      byPath({
        '/api/web/search': json(
          {
            type: 'ErrorResponse',
            error: { code: 'RATE_LIMITED', detail: 'Request rate limit exceeded', status: 429 },
          },
          429,
          { 'retry-after': '2' },
        ),
      }),
    );
    const error = await rejection(model('brave').search(options(), context()));
    expect(error.status).toBe(429);
    expect(error.headers['retry-after']).toBe('2');
  });
});

/** Tavily's documented /search answer (https://docs.tavily.com/documentation/api-reference/endpoint/search). */
const TAVILY_ANSWER = {
  query: 'node lts',
  answer: null,
  images: [],
  results: [
    {
      title: 'Node.js Release schedule',
      url: 'https://github.com/nodejs/Release',
      content: 'Release schedule: 22.x Jod.',
      score: 0.91,
      raw_content: null,
      published_date: 'Fri, 20 Feb 2026 09:00:00 GMT',
    },
    { title: 'Elsewhere', url: 'https://example.com/x', content: 'not included', score: 0.3 },
  ],
  response_time: 1.1,
};

describe('Tavily', () => {
  it('posts the query with its native filters and a bearer key, and re-applies the domain filter', async () => {
    upstream.handle(byPath({ '/api/search': json(TAVILY_ANSWER) }));
    const { results } = await model('tavily', 'advanced').search(
      options({ includeDomains: ['github.com'], excludeDomains: ['pinterest.com'], recencyDays: 365 }),
      context(),
    );
    const request = upstream.requests[0]!;
    expect(request.method).toBe('POST');
    expect(request.headers.authorization).toBe('Bearer tvly-secret-0123456789');
    expect(request.body).toEqual({
      query: 'node lts',
      max_results: 5,
      search_depth: 'advanced',
      include_domains: ['github.com'],
      exclude_domains: ['pinterest.com'],
      time_range: 'year',
    });
    expect(results).toEqual([
      {
        title: 'Node.js Release schedule',
        url: 'https://github.com/nodejs/Release',
        snippet: 'Release schedule: 22.x Jod.',
        publishedAt: '2026-02-20T09:00:00.000Z',
        source: 'tavily',
        score: 0.91,
      },
    ]);
  });

  it('maps a rejected key to 502 without echoing it, and a slow answer to 504', async () => {
    upstream.handle(
      byPath({ '/api/search': json({ detail: { error: 'Unauthorized: invalid key tvly-secret-0123456789' } }, 401) }),
    );
    const rejected = await rejection(model('tavily').search(options(), context()));
    expect(rejected.status).toBe(502);
    expect(rejected.message).not.toContain('tvly-secret');
    await provider?.close?.();
    upstream.handle(() => new Promise<void>(() => undefined));
    const slow = await rejection(model('tavily', 'basic', 200).search(options(), context()));
    expect(slow.status).toBe(504);
  });
});
