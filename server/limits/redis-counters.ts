/**
 * The counters in Redis (`OMNIGATE_REDIS_URL`): every instance pointed at the same Redis shares them, and each
 * admission, settlement and renewal is one Lua script (redis-scripts.ts), so they are exact across instances.
 * Commands fail at once while Redis is unreachable (no offline queue, a short command timeout): the call limiter
 * then applies `limits.on_store_down` instead of letting requests wait for a reconnection.
 */
import { createRequire } from 'node:module';
import type { Redis as RedisClient } from 'ioredis';
import {
  type Admission,
  type Admit,
  type CounterStore,
  type LimitKind,
  type RateState,
  type ScopeLimits,
  type Settle,
  dayEndsIn,
  dayOf,
  periodEndsIn,
  periodOf,
} from './counter-store.js';
import { ADMIT_SCRIPT, RENEW_SCRIPT, SETTLE_SCRIPT } from './redis-scripts.js';

export interface RedisCountersOptions {
  url: string;
  /** Prefix of every key (tests give each run its own). */
  prefix?: string;
  /** A command not answered in this time fails (counts as the store being down). */
  commandTimeoutMs?: number;
  onConnectionError?(error: Error): void;
}

const DAY_MS = 86_400_000;
/** Settlements sent in one script call at most (a script blocks Redis while it runs). */
const MAX_SETTLE_BATCH = 200;

type ScriptClient = RedisClient & {
  omnigateAdmit(...args: Array<string | number>): Promise<Array<number | string>>;
  omnigateSettle(...args: Array<string | number>): Promise<number>;
  omnigateRenew(...args: Array<string | number>): Promise<number>;
};

function field(value: number | undefined): string {
  return value === undefined ? '' : String(value);
}

function rate(limit: number, remaining: number, resetMs: number): RateState | undefined {
  return limit < 0 ? undefined : { limit, remaining, resetMs };
}

export function createRedisCounters(options: RedisCountersOptions): CounterStore {
  const prefix = options.prefix ?? 'omnigate:limits:';
  // Loaded only when Redis is configured: a gateway with in-process counters never holds the client library.
  const { Redis } = createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
  const client = new Redis(options.url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: options.commandTimeoutMs ?? 1000,
    // Reconnect in the background for ever, at most every 2 s; calls meanwhile see the store as down.
    retryStrategy: (attempt) => Math.min(attempt * 100, 2000),
    lazyConnect: false,
    // Commands issued in one event-loop turn (admissions of concurrent calls) go out in one write.
    enableAutoPipelining: true,
  }) as ScriptClient;
  client.on('error', (error: Error) => options.onConnectionError?.(error));
  client.defineCommand('omnigateAdmit', { numberOfKeys: 0, lua: ADMIT_SCRIPT });
  client.defineCommand('omnigateSettle', { numberOfKeys: 0, lua: SETTLE_SCRIPT });
  client.defineCommand('omnigateRenew', { numberOfKeys: 0, lua: RENEW_SCRIPT });

  const baseOf = (scope: string) => `${prefix}{${scope}}`;
  // The first connection may take longer than a command on a busy host; the first calls wait up to 5 s for it.
  const connectWaitMs = Math.max(options.commandTimeoutMs ?? 1000, 5000);

  /**
   * Without an offline queue a command fails while the client is not ready: the first calls after start wait for
   * the connection (as long as a command may take); later, a lost connection fails calls at once.
   */
  let everReady = false;
  client.once('ready', () => {
    everReady = true;
  });
  let waiting: Promise<void> | undefined;
  function ready(): Promise<void> | void {
    if (client.status === 'ready' || everReady) {
      return;
    }
    // One wait shared by every call that arrives before the first connection (not a listener each).
    waiting ??= new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        client.off('ready', onReady);
        waiting = undefined;
        reject(new Error(`Redis not ready after ${connectWaitMs} ms`));
      }, connectWaitMs);
      const onReady = () => {
        clearTimeout(timer);
        resolve();
      };
      client.once('ready', onReady);
    });
    return waiting;
  }

  const pending: Array<{ request: Settle; resolve(): void; reject(error: unknown): void }> = [];

  function settleArgs(request: Settle, args: Array<string | number>): void {
    const { now } = request;
    args.push(request.lease, request.tokensDelta, request.costUsd, request.mediaUnits, request.scopes.length);
    for (const { scope, limits } of request.scopes) {
      // A scope counts spend only while it has a budget, and media units only while it limits them.
      const budget = limits.budgetUsd !== undefined && request.costUsd > 0;
      const media = limits.mediaUnitsPerDay !== undefined && request.mediaUnits > 0;
      const total = (limits.budgetPeriod ?? 'month') === 'total';
      args.push(
        baseOf(scope),
        field(limits.tpm),
        budget ? periodOf(limits, now) : '',
        media ? dayOf(now) : '',
        budget && !total ? periodEndsIn(limits, now) + DAY_MS : -1,
        media ? dayEndsIn(now) + DAY_MS : 0,
      );
    }
  }

  async function flushSettlements(): Promise<void> {
    const batch = pending.splice(0, MAX_SETTLE_BATCH);
    if (pending.length > 0) {
      setImmediate(flushSettlements);
    }
    // One clock for the batch: the latest, so no bucket drains backwards.
    const now = Math.max(...batch.map(({ request }) => request.now));
    const args: Array<string | number> = [now, batch.length];
    for (const { request } of batch) {
      settleArgs(request, args);
    }
    try {
      await ready();
      await client.omnigateSettle(...args);
      for (const { resolve } of batch) {
        resolve();
      }
    } catch (error) {
      for (const { reject } of batch) {
        reject(error);
      }
    }
  }

  return {
    async admit(request: Admit): Promise<Admission> {
      const { now } = request;
      const args: Array<string | number> = [
        now,
        request.leaseMs,
        request.lease,
        request.tokens,
        request.costUsd,
        request.mediaUnits,
        request.scopes.length,
        request.spends === false ? 0 : 1,
      ];
      for (const { scope, limits } of request.scopes) {
        // Days and periods are read only by the limits that count per day or period (dates cost CPU per call).
        const budget = limits.budgetUsd !== undefined;
        const daily = budget || limits.mediaUnitsPerDay !== undefined;
        const total = (limits.budgetPeriod ?? 'month') === 'total';
        args.push(
          baseOf(scope),
          field(limits.rpm),
          field(limits.tpm),
          field(limits.maxParallel),
          field(limits.mediaUnitsPerDay),
          field(limits.budgetUsd),
          budget ? periodOf(limits, now) : '',
          daily ? dayOf(now) : '',
          budget && !total ? periodEndsIn(limits, now) : -1,
          daily ? dayEndsIn(now) : 0,
        );
      }
      await ready();
      const reply = await client.omnigateAdmit(...args);
      const [admitted, kind, index, retryAfterMs, reqL, reqR, reqT, tokL, tokR, tokT] = reply.map((value, at) =>
        at === 1 ? value : Number(value),
      ) as [number, string, number, number, number, number, number, number, number, number];
      const rates = { requests: rate(reqL, reqR, reqT), tokens: rate(tokL, tokR, tokT) };
      if (admitted === 1) {
        return { admitted: true, rates };
      }
      return {
        admitted: false,
        kind: kind as LimitKind,
        scope: request.scopes[index]!.scope,
        retryAfterMs,
        rates,
      };
    },

    settle(request) {
      // Queued, and sent with every other settlement of this event-loop turn as one script call.
      return new Promise<void>((resolve, reject) => {
        pending.push({ request, resolve, reject });
        if (pending.length === 1) {
          setImmediate(flushSettlements);
        }
      });
    },

    async renew(scopes: ScopeLimits[], lease, now, leaseMs) {
      await ready();
      await client.omnigateRenew(now, lease, leaseMs, ...scopes.map(({ scope }) => baseOf(scope)));
    },

    async spent(scope, now) {
      await ready();
      return Number((await client.get(`${baseOf(scope.scope)}:spend:${periodOf(scope.limits, now)}`)) ?? 0);
    },

    async close() {
      client.disconnect();
    },
  };
}
