import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sendBytes, sendRedirect } from '../../../test/fakes/answers.js';
import { byPath, startFakeUpstream, type FakeUpstream } from '../../../test/fakes/fake-upstream.js';
import { UpstreamError } from '../../core/api-error.js';
import { blockedAddressReason } from './blocked-addresses.js';
import { createSafeFetcher, type SafeFetcher, type SafeFetchSettings } from './safe-fetch.js';
import { rejection } from '../../../test/helpers/rejection.js';

const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const payload = new Uint8Array(Array.from({ length: 5000 }, (_, i) => (i * 31) % 256));

let upstream: FakeUpstream;
/** Another server on loopback: what an SSRF would reach. It must never see a request. */
let internal: FakeUpstream;
const fetchers: SafeFetcher[] = [];

function fetcher(settings: Partial<SafeFetchSettings> = {}): SafeFetcher {
  const created = createSafeFetcher({ provider: 'up', baseUrl: `${upstream.origin}/v1`, timeoutMs: 5000, ...settings });
  fetchers.push(created);
  return created;
}

beforeAll(async () => {
  upstream = await startFakeUpstream();
  internal = await startFakeUpstream((_request, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' }).end('internal secret');
  });
});

afterEach(async () => {
  await Promise.all(fetchers.splice(0).map((created) => created.close()));
  upstream.requests.length = 0;
  expect(internal.requests).toEqual([]);
});

afterAll(async () => {
  await Promise.all([upstream.close(), internal.close()]);
});

describe("safe fetch on the provider's own origin", () => {
  it('fetches bytes from the trusted origin even on loopback', async () => {
    upstream.handle(byPath({ '/files/a.bin': (_request, res) => sendBytes(res, payload, 'application/octet-stream') }));
    const fetched = await fetcher().fetch(`${upstream.origin}/files/a.bin?sig=1`, AbortSignal.timeout(5000));
    expect(sha(fetched.bytes)).toBe(sha(payload));
    expect(fetched.contentType).toBe('application/octet-stream');
    expect(upstream.requests.map((request) => request.url)).toEqual(['/files/a.bin?sig=1']);
  });

  it('maps a non-2xx answer to 502', async () => {
    upstream.handle(byPath({}));
    const error = await rejection(fetcher().fetch(`${upstream.origin}/files/missing.png`, AbortSignal.timeout(5000)));
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error.status).toBe(502);
    expect((error as UpstreamError).upstreamStatus).toBe(404);
  });

  it('refuses a body larger than the limit, declared or streamed', async () => {
    upstream.handle(
      byPath({
        '/declared': (_request, res) => sendBytes(res, payload, 'image/png'),
        '/streamed': (_request, res) => {
          res.writeHead(200, { 'content-type': 'image/png' });
          res.write(payload.subarray(0, 600));
          setTimeout(() => res.end(payload.subarray(600)), 20);
        },
      }),
    );
    const limited = fetcher({ maxBytes: 1000 });
    for (const path of ['/declared', '/streamed']) {
      const error = await rejection(limited.fetch(`${upstream.origin}${path}`, AbortSignal.timeout(5000)));
      expect(error.status).toBe(502);
      expect(error.code).toBe('upstream_result_too_large');
    }
  });

  it('times out a stalled answer with 504, and a caller that went away with 499', async () => {
    upstream.handle(
      byPath({ '/stall': (_request, res) => void res.writeHead(200, { 'content-type': 'image/png' }).write('x') }),
    );
    const stalled = await rejection(
      fetcher({ timeoutMs: 200 }).fetch(`${upstream.origin}/stall`, new AbortController().signal),
    );
    expect(stalled.status).toBe(504);
    const caller = new AbortController();
    setTimeout(() => caller.abort(), 50);
    const gone = await rejection(fetcher().fetch(`${upstream.origin}/stall`, caller.signal));
    expect(gone.status).toBe(499);
  });

  it('follows up to three redirects and refuses a fourth', async () => {
    upstream.handle(
      byPath({
        '/r1': (_request, res) => sendRedirect(res, '/r2'),
        '/r2': (_request, res) => sendRedirect(res, `${upstream.origin}/r3`, 307),
        '/r3': (_request, res) => sendRedirect(res, '/file', 301),
        '/file': (_request, res) => sendBytes(res, payload, 'image/png'),
      }),
    );
    expect(sha((await fetcher().fetch(`${upstream.origin}/r1`, AbortSignal.timeout(5000))).bytes)).toBe(sha(payload));
    const error = await rejection(
      fetcher({ maxRedirects: 2 }).fetch(`${upstream.origin}/r1`, AbortSignal.timeout(5000)),
    );
    expect(error.status).toBe(502);
    expect(error.message).toMatch(/redirected more than 2 times/);
  });
});

describe('safe fetch refuses what is not the public internet', () => {
  it.each([
    ['another loopback port', () => `${internal.origin}/secret`, /127\.0\.0\.1 is a loopback address/],
    ['the cloud metadata address', () => 'http://169.254.169.254/latest/meta-data/', /link-local \(cloud metadata\)/],
    ['an IPv4-mapped IPv6 loopback', () => `http://[::ffff:127.0.0.1]:${new URL(internal.origin).port}/`, /loopback/],
    ['IPv6 loopback', () => `http://[::1]:${new URL(internal.origin).port}/`, /loopback/],
    [
      'a decimal IPv4 loopback',
      () => `http://2130706433:${new URL(internal.origin).port}/`,
      /127\.0\.0\.1 is a loopback/,
    ],
    [
      'localhost by name',
      () => `http://localhost:${new URL(internal.origin).port}/`,
      /localhost resolves to a non-public address/,
    ],
    ['a file URL', () => 'file:///etc/passwd', /scheme file: is not http or https/],
    ['not a URL', () => 'images/1.png', /not a URL/],
  ])('refuses %s with a 502 and fetches nothing', async (_name, url, message) => {
    const error = await rejection(fetcher().fetch(url(), AbortSignal.timeout(5000)));
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error.status).toBe(502);
    expect(error.code).toBe('upstream_url_refused');
    expect(error.message).toMatch(message);
  });

  it('refuses a redirect from the trusted origin to a private address', async () => {
    upstream.handle(byPath({ '/files/a.png': (_request, res) => sendRedirect(res, `${internal.origin}/secret`) }));
    const error = await rejection(fetcher().fetch(`${upstream.origin}/files/a.png`, AbortSignal.timeout(5000)));
    expect(error.status).toBe(502);
    expect(error.message).toMatch(/127\.0\.0\.1 is a loopback address/);
    expect(upstream.requests).toHaveLength(1);
  });

  it('refuses a host whose name resolves to a private address', async () => {
    const resolve = async (hostname: string) => (hostname === 'media.test' ? [{ address: '10.0.0.7', family: 4 }] : []);
    const error = await rejection(fetcher({ resolve }).fetch('http://media.test/a.png', AbortSignal.timeout(5000)));
    expect(error.status).toBe(502);
    expect(error.message).toMatch(/media\.test resolves to a non-public address/);
    // Naming the address (or its kind) would tell the caller what an internal name resolves to.
    expect(error.message).not.toMatch(/10\.0\.0\.7|private/);
  });

  it.each(['::ffff:8.8.8.8', '2002:a00:1::1', '64:ff9b:1::a00:1', '64:ff9b::a00:1'])(
    'refuses a host that resolves to %s, naming no address',
    async (address) => {
      const resolve = async () => [{ address, family: 6 }];
      const error = await rejection(fetcher({ resolve }).fetch('http://v6.test/a.png', AbortSignal.timeout(5000)));
      expect(error.status).toBe(502);
      expect(error.code).toBe('upstream_url_refused');
      expect(error.message).toMatch(/v6\.test resolves to a non-public address/);
      expect(error.message).not.toContain(address);
    },
  );

  it('refuses a host with any private address among public ones', async () => {
    const resolve = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '::ffff:169.254.169.254', family: 6 },
    ];
    const error = await rejection(fetcher({ resolve }).fetch('http://mixed.test/a.png', AbortSignal.timeout(5000)));
    expect(error.message).toMatch(/mixed\.test resolves to a non-public address/);
    expect(error.message).not.toMatch(/169\.254|link-local/);
  });
});

describe('the guarded path connects to the address it checked', () => {
  // The only way to reach a server from this test is loopback, so these tests let 127.0.0.1 through and keep
  // every other rule; what they show is that names are resolved once by our resolver and checked per hop.
  const allowLoopbackOnly = (address: string) => (address === '127.0.0.1' ? undefined : blockedAddressReason(address));

  it('resolves the name once, connects to that address, and re-checks a redirect to another name', async () => {
    const looked: string[] = [];
    const resolve = async (hostname: string) => {
      looked.push(hostname);
      return hostname === 'cdn.test' ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '192.168.0.9', family: 4 }];
    };
    const port = new URL(internal.origin).port;
    internal.handle(
      byPath({
        '/a.png': (_request, res) => sendBytes(res, payload, 'image/png'),
        '/hop': (_request, res) => sendRedirect(res, `http://lan.test:${port}/x`),
      }),
    );
    const guarded = fetcher({ resolve, blockedReason: allowLoopbackOnly });
    try {
      const fetched = await guarded.fetch(`http://cdn.test:${port}/a.png`, AbortSignal.timeout(5000));
      expect(sha(fetched.bytes)).toBe(sha(payload));
      expect(internal.requests.map((request) => request.headers.host)).toEqual([`cdn.test:${port}`]);
      const error = await rejection(guarded.fetch(`http://cdn.test:${port}/hop`, AbortSignal.timeout(5000)));
      expect(error.message).toMatch(/lan\.test resolves to a non-public address/);
      expect(error.message).not.toMatch(/192\.168/);
      expect(looked.filter((name) => name === 'lan.test')).toHaveLength(1);
      // One lookup per connection opened to cdn.test: nothing resolves the name a second time for a socket.
      const connections = new Set(internal.requests.map((request) => request.remotePort)).size;
      expect(looked.filter((name) => name === 'cdn.test')).toHaveLength(connections);
    } finally {
      internal.requests.length = 0;
      internal.handle((_request, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' }).end('internal secret');
      });
    }
  });
});
