/**
 * Fetching a URL an upstream handed us (an image or audio answered as `url`), so that callers get bytes, never
 * an upstream's URL. Such a URL is not ours to trust: a compromised or careless upstream could point us at our
 * own network (SSRF), so every hop is guarded:
 *
 * - http and https only;
 * - the host is resolved here, every address it resolves to is checked (`blocked-addresses.ts`), and the socket
 *   connects to the address that was checked: undici's connector takes our `lookup`, so there is no second
 *   resolution an attacker's DNS could answer differently (DNS rebinding);
 * - redirects are followed by hand, at most `maxRedirects`, each target checked like the first URL;
 * - the body is read up to `maxBytes` and the whole fetch has `timeoutMs`;
 * - a non-2xx answer is the upstream's failure: 502.
 *
 * One exception keeps self-hosted setups working: URLs on the provider's own `base_url` origin (typically a
 * server on localhost or the LAN) are fetched without the address checks, since we already talk to that host.
 * A redirect from there to anywhere else is checked again.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, request, type Dispatcher } from 'undici';
import { ApiError, UpstreamError } from '../../core/api-error.js';
import { blockedAddressReason } from './blocked-addresses.js';

export interface ResolvedAddress {
  address: string;
  family: number;
}

export interface SafeFetchSettings {
  /** The provider whose answer held the URL; named in errors. */
  provider: string;
  /** The provider's `base_url`: URLs on its origin are trusted. Absent for URLs a caller gave: nothing is trusted. */
  baseUrl?: string;
  /** For the whole fetch, redirects included. */
  timeoutMs: number;
  /** Default 20 MiB. */
  maxBytes?: number;
  /** Default 3. */
  maxRedirects?: number;
  /** Default: the system resolver (`dns.lookup`, all addresses). Replaceable so tests can name hosts. */
  resolve?: (hostname: string) => Promise<ResolvedAddress[]>;
  /** Default `blockedAddressReason`. Replaceable only so tests can reach the guarded path on 127.0.0.1. */
  blockedReason?: (address: string) => string | undefined;
}

export interface FetchedBody {
  bytes: Uint8Array;
  /** The answer's own `content-type`, for information only: callers decide the format from the bytes. */
  contentType?: string;
}

export interface SafeFetcher {
  fetch(url: string, signal: AbortSignal): Promise<FetchedBody>;
  close(): Promise<void>;
}

export const DEFAULT_MAX_FETCH_BYTES = 20 * 1024 * 1024;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * Thrown from our `lookup`; found again in the error undici rejects with. Its message names neither the address
 * nor its kind: a caller who hands us URLs must not learn what internal names resolve to.
 */
class BlockedAddressError extends Error {
  constructor(
    readonly hostname: string,
    readonly address: string,
    readonly reason: string,
  ) {
    super(`${hostname} resolves to a non-public address`);
    this.name = 'BlockedAddressError';
  }
}

function findBlocked(error: unknown): BlockedAddressError | undefined {
  for (
    let current = error, depth = 0;
    current && depth < 5;
    current = (current as { cause?: unknown }).cause, depth += 1
  ) {
    if (current instanceof BlockedAddressError) {
      return current;
    }
  }
  return undefined;
}

/** URL hostnames keep IPv6 literals in brackets. */
function bareHost(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/**
 * The checks of a URL that need no lookup: a scheme other than http(s), an IP literal that is blocked. Exported
 * so a caller's URL can be refused before anything waits on the fetch; `fetch` makes them again.
 */
export function urlRefusal(url: URL, blockedReason: (address: string) => string | undefined = blockedAddressReason) {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `scheme ${url.protocol} is not http or https`;
  }
  const host = bareHost(url);
  // An IP literal is connected to without any lookup, so it is checked here.
  const literalReason = isIP(host) ? blockedReason(host) : undefined;
  return literalReason ? `${host} is a ${literalReason} address` : undefined;
}

async function systemResolve(hostname: string): Promise<ResolvedAddress[]> {
  return dnsLookup(hostname, { all: true, verbatim: true });
}

export function createSafeFetcher(settings: SafeFetchSettings): SafeFetcher {
  const { provider, timeoutMs } = settings;
  const trustedOrigin = settings.baseUrl ? new URL(settings.baseUrl).origin : undefined;
  const maxBytes = settings.maxBytes ?? DEFAULT_MAX_FETCH_BYTES;
  const maxRedirects = settings.maxRedirects ?? 3;
  const resolve = settings.resolve ?? systemResolve;
  const blockedReason = settings.blockedReason ?? blockedAddressReason;

  /**
   * Resolves once and hands the socket exactly the checked addresses. A host with any blocked address is
   * refused outright: a public name with a private record is not one we should pick from.
   */
  const guardedLookup: LookupFunction = (hostname, options, callback) => {
    resolve(hostname).then(
      (found) => {
        const addresses = options.family ? found.filter((entry) => entry.family === options.family) : found;
        if (addresses.length === 0) {
          callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
          return;
        }
        for (const entry of addresses) {
          const reason = blockedReason(entry.address);
          if (reason) {
            callback(new BlockedAddressError(hostname, entry.address, reason), '', 0);
            return;
          }
        }
        if (options.all) {
          (callback as unknown as (error: null, addresses: ResolvedAddress[]) => void)(null, addresses);
        } else {
          callback(null, addresses[0]!.address, addresses[0]!.family);
        }
      },
      (error: unknown) => callback(error as NodeJS.ErrnoException, '', 0),
    );
  };

  const agentOptions = { headersTimeout: timeoutMs, bodyTimeout: timeoutMs, connectTimeout: timeoutMs, connections: 8 };
  const guarded = new Agent({ ...agentOptions, connect: { lookup: guardedLookup } });
  const trusted = new Agent(agentOptions);

  const refused = (what: string) =>
    new UpstreamError(
      provider,
      502,
      null,
      `Upstream ${provider} answered with a URL the gateway refuses to fetch: ${what}`,
      { code: 'upstream_url_refused' },
    );

  function checkUrl(url: URL): void {
    const reason = url.origin === trustedOrigin ? undefined : urlRefusal(url, blockedReason);
    if (reason) {
      throw refused(reason);
    }
  }

  function failure(error: unknown, callerSignal: AbortSignal, signal: AbortSignal, host: string): ApiError {
    if (error instanceof ApiError) {
      return error;
    }
    const blocked = findBlocked(error);
    if (blocked) {
      return refused(blocked.message);
    }
    if (callerSignal.aborted) {
      return new ApiError(499, 'The client closed the request.', { code: 'client_closed_request', cause: error });
    }
    const code = (error as { code?: unknown })?.code;
    if (signal.aborted || (typeof code === 'string' && code.includes('TIMEOUT'))) {
      return new UpstreamError(
        provider,
        504,
        null,
        `Fetching a result of upstream ${provider} from ${host} took longer than ${timeoutMs} ms`,
        { cause: error },
      );
    }
    const reason = typeof code === 'string' ? code : ((error as Error)?.message ?? 'unknown error');
    return new UpstreamError(
      provider,
      502,
      null,
      `Fetching a result of upstream ${provider} from ${host} failed (${reason})`,
      { cause: error },
    );
  }

  async function readLimited(body: Dispatcher.ResponseData['body'], host: string): Promise<Uint8Array> {
    const pieces: Buffer[] = [];
    let size = 0;
    for await (const piece of body) {
      size += (piece as Buffer).length;
      if (size > maxBytes) {
        body.destroy();
        throw new UpstreamError(
          provider,
          502,
          null,
          `A result of upstream ${provider} at ${host} is larger than ${maxBytes} bytes; not fetched`,
          { code: 'upstream_result_too_large' },
        );
      }
      pieces.push(piece as Buffer);
    }
    return new Uint8Array(Buffer.concat(pieces));
  }

  async function fetchOnce(url: URL, signal: AbortSignal): Promise<FetchedBody | URL> {
    checkUrl(url);
    const host = bareHost(url);
    const response = await request(url, {
      method: 'GET',
      dispatcher: url.origin === trustedOrigin ? trusted : guarded,
      signal,
      headers: { accept: 'image/*, audio/*, */*' },
    });
    const { statusCode, headers, body } = response;
    body.on('error', () => undefined); // destroyed on purpose below; nobody else listens
    if (REDIRECT_STATUSES.has(statusCode)) {
      body.destroy();
      const location = headers.location;
      if (typeof location !== 'string' || !location) {
        throw new UpstreamError(
          provider,
          502,
          statusCode,
          `A result of upstream ${provider} at ${host} redirected (${statusCode}) without a location`,
        );
      }
      return new URL(location, url);
    }
    if (statusCode < 200 || statusCode >= 300) {
      body.destroy();
      throw new UpstreamError(
        provider,
        502,
        statusCode,
        `Fetching a result of upstream ${provider} from ${host} failed (${statusCode})`,
      );
    }
    const declared = Number(headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBytes) {
      body.destroy();
      throw new UpstreamError(
        provider,
        502,
        statusCode,
        `A result of upstream ${provider} at ${host} is larger than ${maxBytes} bytes (${declared}); not fetched`,
        { code: 'upstream_result_too_large' },
      );
    }
    const contentType = typeof headers['content-type'] === 'string' ? headers['content-type'] : undefined;
    return { bytes: await readLimited(body, host), contentType };
  }

  async function fetch(input: string, callerSignal: AbortSignal): Promise<FetchedBody> {
    let url: URL;
    try {
      url = new URL(input);
    } catch {
      throw refused('not a URL');
    }
    const signal = AbortSignal.any([callerSignal, AbortSignal.timeout(timeoutMs)]);
    for (let redirects = 0; ; redirects += 1) {
      let outcome: FetchedBody | URL;
      try {
        outcome = await fetchOnce(url, signal);
      } catch (error) {
        throw failure(error, callerSignal, signal, bareHost(url));
      }
      if (!(outcome instanceof URL)) {
        return outcome;
      }
      if (redirects >= maxRedirects) {
        throw new UpstreamError(
          provider,
          502,
          null,
          `A result of upstream ${provider} redirected more than ${maxRedirects} times; not fetched`,
          { code: 'upstream_url_refused' },
        );
      }
      url = outcome;
    }
  }

  return {
    fetch,
    close: async () => {
      await Promise.all([guarded.close(), trusted.close()]);
    },
  };
}
