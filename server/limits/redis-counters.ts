/**
 * The counters in Redis (`OMNIGATE_REDIS_URL`): every instance pointed at the same Redis shares them, and each
 * admission, settlement and renewal runs in a Lua script (redis-scripts.ts), so they are exact across instances;
 * the admissions (and the settlements) of one event-loop turn share one script call. Settlements are held up to
 * SETTLE_HOLD_MS (or until the next admissions are sent, whichever comes first) and travel in the same write as
 * those admissions: a call one at a time costs one round trip to Redis, not two.
 * Far from the limits, calls are admitted from local allowances instead (redis-allowance.ts): blocks of headroom
 * taken in one script call, counted at once, given back when unused.
 * Commands fail at once while Redis is unreachable (no offline queue, a short command timeout): the call limiter
 * then applies `limits.on_store_down` instead of letting requests wait for a reconnection.
 */
import { randomBytes } from 'node:crypto';
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
import { BLOCK_MS, createAllowances } from './redis-allowance.js';
import { ADMIT_SCRIPT, GRANT_SCRIPT, RENEW_SCRIPT, RETURN_SCRIPT, SETTLE_SCRIPT } from './redis-scripts.js';

export interface RedisCountersOptions {
  url: string;
  /** Prefix of every key (tests give each run its own). */
  prefix?: string;
  /** A command not answered in this time fails (counts as the store being down). */
  commandTimeoutMs?: number;
  onConnectionError?(error: Error): void;
  /**
   * Local allowances (redis-allowance.ts): far from its limits, an instance admits calls from blocks it took from
   * Redis, not one round trip per call. On unless false.
   */
  allowances?: boolean;
  /** Where a block that could not be given back is reported (its unused part then expires on its own). */
  onGiveBackError?(error: unknown): void;
}

const DAY_MS = 86_400_000;
/** Admissions or settlements sent in one script call at most (a script blocks Redis while it runs). */
const MAX_BATCH = 200;
/**
 * How long a settlement may wait for the next admissions to ride along with. Holding it never admits more than
 * the limits allow (a held settlement only frees a slot or refunds an estimate later); it delays, by at most
 * this, a freed slot or refund reaching Redis for the other instances. This instance's own next admissions
 * always see it: they are sent after it.
 */
export const SETTLE_HOLD_MS = 20;
/** Leases renewed in one script call at most (a renewal is cheap: one ZADD XX entry per lease and set). */
const RENEW_BATCH = 1000;

interface ScriptPipeline {
  omnigateSettle(...args: Array<string | number>): ScriptPipeline;
  omnigateAdmit(...args: Array<string | number>): ScriptPipeline;
  exec(): Promise<Array<[Error | null, unknown]> | null>;
}

type ScriptClient = Omit<RedisClient, 'pipeline'> & {
  pipeline(): ScriptPipeline;
  omnigateAdmit(...args: Array<string | number>): Promise<Array<number | string>>;
  omnigateSettle(...args: Array<string | number>): Promise<number>;
  omnigateRenew(...args: Array<string | number>): Promise<number>;
  omnigateGrant(...args: Array<string | number>): Promise<Array<number | string>>;
  omnigateReturn(...args: Array<string | number>): Promise<number>;
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
    // No auto-pipelining: the admissions and settlements are batched here already (one pipeline per turn when
    // both are due); ioredis's own batching would add a pipeline object and a tick per command.
    enableAutoPipelining: false,
  }) as unknown as ScriptClient;
  client.on('error', (error: Error) => options.onConnectionError?.(error));
  client.defineCommand('omnigateAdmit', { numberOfKeys: 0, lua: ADMIT_SCRIPT });
  client.defineCommand('omnigateSettle', { numberOfKeys: 0, lua: SETTLE_SCRIPT });
  client.defineCommand('omnigateRenew', { numberOfKeys: 0, lua: RENEW_SCRIPT });
  client.defineCommand('omnigateGrant', { numberOfKeys: 0, lua: GRANT_SCRIPT });
  client.defineCommand('omnigateReturn', { numberOfKeys: 0, lua: RETURN_SCRIPT });

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

  /**
   * Admissions and settlements are queued and sent once per event-loop turn: every settlement of the turn as one
   * script call, then every admission as another (each at most MAX_BATCH calls), both in one write. N concurrent
   * calls cost two script calls and one round trip, not N. Settlements go first, so a slot freed in a turn is
   * free for the admissions of the same turn. Each queue keeps its argument list as it fills: nothing is built
   * twice.
   */
  let admitArgs: Array<string | number> = [0];
  let admitWaiters: Array<{
    scopes: ScopeLimits[];
    resolve(admission: Admission): void;
    reject(error: unknown): void;
  }> = [];
  let settleArgs: Array<string | number> = [0, 0];
  let settleWaiters: Array<{ resolve(): void; reject(error: unknown): void }> = [];
  /** The latest clock of the queued settlements: one clock for the batch, so no bucket drains backwards. */
  let settleNow = 0;
  let scheduled = false;
  /** The timer that sends held settlements when no admission came along within SETTLE_HOLD_MS. */
  let settleTimer: NodeJS.Timeout | undefined;

  function schedule(): void {
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  }

  function flush(): void {
    scheduled = false;
    if (settleWaiters.length > 0 && admitWaiters.length > 0) {
      // Both as one pipeline: one write, one reply to read; settlements first, so a freed slot is free here.
      const settlements = takeSettlements();
      const admissions = takeAdmissions();
      const both = run(() =>
        client
          .pipeline()
          .omnigateSettle(...settlements.args)
          .omnigateAdmit(...admissions.args)
          .exec(),
      );
      settled(
        both.then((results) => replyOf(results, 0)),
        settlements.waiters,
      );
      admitted(
        both.then((results) => replyOf(results, 1) as Array<number | string>),
        admissions.waiters,
      );
      return;
    }
    if (settleWaiters.length > 0) {
      sendSettlements();
    }
    if (admitWaiters.length > 0) {
      sendAdmissions();
    }
  }

  function replyOf(results: Array<[Error | null, unknown]> | null, at: number): unknown {
    const [error, reply] = results?.[at] ?? [new Error('Redis pipeline returned no reply'), undefined];
    if (error) {
      throw error;
    }
    return reply;
  }

  /** Sends once the first connection is up (at once afterwards). */
  function run<T>(send: () => Promise<T>): Promise<T> {
    const waited = ready();
    return waited ? waited.then(send) : send();
  }

  function flushSettlements(): void {
    settleTimer = undefined;
    if (settleWaiters.length > 0) {
      sendSettlements();
    }
  }

  function takeSettlements(): { args: Array<string | number>; waiters: typeof settleWaiters } {
    if (settleTimer) {
      clearTimeout(settleTimer);
      settleTimer = undefined;
    }
    const args = settleArgs;
    const waiters = settleWaiters;
    args[0] = settleNow;
    args[1] = waiters.length;
    settleArgs = [0, 0];
    settleWaiters = [];
    settleNow = 0;
    return { args, waiters };
  }

  function takeAdmissions(): { args: Array<string | number>; waiters: typeof admitWaiters } {
    const args = admitArgs;
    const waiters = admitWaiters;
    args[0] = waiters.length;
    admitArgs = [0];
    admitWaiters = [];
    return { args, waiters };
  }

  /** Settles the waiters of a batch; the promise returned never rejects. */
  function settled(sent: Promise<unknown>, waiters: typeof settleWaiters): Promise<void> {
    return sent.then(
      () => {
        for (const waiter of waiters) {
          waiter.resolve();
        }
      },
      (error: unknown) => {
        for (const waiter of waiters) {
          waiter.reject(error);
        }
      },
    );
  }

  function admitted(sent: Promise<Array<number | string>>, waiters: typeof admitWaiters): void {
    sent.then(
      (reply) => {
        for (let at = 0; at < waiters.length; at++) {
          waiters[at]!.resolve(admissionOf(reply, at * 10, waiters[at]!.scopes));
        }
      },
      (error: unknown) => {
        for (const waiter of waiters) {
          waiter.reject(error);
        }
      },
    );
  }

  function sendSettlements(): Promise<void> {
    const { args, waiters } = takeSettlements();
    return settled(
      run(() => client.omnigateSettle(...args)),
      waiters,
    );
  }

  function sendAdmissions(): void {
    const { args, waiters } = takeAdmissions();
    admitted(
      run(() => client.omnigateAdmit(...args)),
      waiters,
    );
  }

  function admissionOf(reply: Array<number | string>, at: number, scopes: ScopeLimits[]): Admission {
    const rates = {
      requests: rate(Number(reply[at + 4]), Number(reply[at + 5]), Number(reply[at + 6])),
      tokens: rate(Number(reply[at + 7]), Number(reply[at + 8]), Number(reply[at + 9])),
    };
    if (Number(reply[at]) !== 0) {
      return { admitted: true, rates };
    }
    return {
      admitted: false,
      kind: String(reply[at + 1]) as LimitKind,
      scope: scopes[Number(reply[at + 2])]!.scope,
      retryAfterMs: Number(reply[at + 3]),
      rates,
    };
  }

  /** One call's ADMIT_SCRIPT fields: 8, then 10 per scope. */
  function pushAdmission(args: Array<string | number>, request: Admit): void {
    const { now } = request;
    args.push(
      now,
      request.leaseMs,
      request.lease,
      request.tokens,
      request.costUsd,
      request.mediaUnits,
      request.scopes.length,
      request.spends === false ? 0 : 1,
    );
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
  }

  const store = {
    admit(request: Admit): Promise<Admission> {
      pushAdmission(admitArgs, request);
      return new Promise<Admission>((resolve, reject) => {
        admitWaiters.push({ scopes: request.scopes, resolve, reject });
        if (admitWaiters.length >= MAX_BATCH) {
          // A full batch goes now, after the settlements queued before it.
          if (settleWaiters.length > 0) {
            sendSettlements();
          }
          sendAdmissions();
        } else {
          schedule();
        }
      });
    },

    settle(request: Settle): Promise<void> {
      const { now } = request;
      const args = settleArgs;
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
      if (now > settleNow) {
        settleNow = now;
      }
      return new Promise<void>((resolve, reject) => {
        settleWaiters.push({ resolve, reject });
        if (settleWaiters.length >= MAX_BATCH) {
          sendSettlements();
        } else if (!settleTimer) {
          // Held: the next admissions (sent after it) or this timer, whichever comes first, take it to Redis.
          settleTimer = setTimeout(flushSettlements, SETTLE_HOLD_MS);
        }
      });
    },

    async renewLeases(leases: ReadonlyMap<string, readonly string[]>, now: number, leaseMs: number): Promise<void> {
      // Batches of at most RENEW_BATCH leases (a scope's list may span two), sent together.
      const batches: Array<Array<string | number>> = [];
      let args: Array<string | number> = [now, leaseMs, 0];
      let size = 0;
      for (const [scope, list] of leases) {
        for (let at = 0; at < list.length; ) {
          const take = Math.min(list.length - at, RENEW_BATCH - size);
          args.push(baseOf(scope), take);
          for (let i = at; i < at + take; i++) {
            args.push(list[i]!);
          }
          args[2] = (args[2] as number) + 1;
          at += take;
          size += take;
          if (size === RENEW_BATCH) {
            batches.push(args);
            args = [now, leaseMs, 0];
            size = 0;
          }
        }
      }
      if (size > 0) {
        batches.push(args);
      }
      if (batches.length === 0) {
        return;
      }
      await ready();
      await Promise.all(batches.map((batch) => client.omnigateRenew(...batch)));
    },

    async spent(scope: ScopeLimits, now: number): Promise<number> {
      // Held settlements first: the read goes after them on the same connection, so it sees them.
      flushSettlements();
      await ready();
      return Number((await client.get(`${baseOf(scope.scope)}:spend:${periodOf(scope.limits, now)}`)) ?? 0);
    },

    async close(): Promise<void> {
      // Held settlements are sent (and answered) before the connection closes: nothing settled is lost.
      if (settleWaiters.length > 0) {
        await sendSettlements();
      }
      client.disconnect();
    },
  };

  if (options.allowances === false) {
    return store;
  }
  const allowances = createAllowances(
    {
      grant(blockId, sizes, request) {
        const args: Array<string | number> = [blockId, sizes.requests, sizes.tokens, sizes.slots, BLOCK_MS];
        pushAdmission(args, request);
        return run(() => client.omnigateGrant(...args));
      },
      giveBack: (args) => run(() => client.omnigateReturn(...args)),
      admit: store.admit,
      settle: store.settle,
      admissionOf: (reply, scopes) => admissionOf(reply, 0, scopes),
      onGiveBackError: (error) => options.onGiveBackError?.(error),
      baseOf,
    },
    randomBytes(6).toString('base64url'),
  );
  return {
    admit: allowances.admit,
    settle: allowances.settle,
    renewLeases: (leases, now, leaseMs) => store.renewLeases(allowances.renewalNames(leases), now, leaseMs),
    spent: store.spent,
    async close() {
      // Blocks go back before the held settlements and the connection: nothing taken is kept.
      await allowances.close();
      await store.close();
    },
  };
}
