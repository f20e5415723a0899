/**
 * Local allowances for the Redis counters: while a key (and its project) is far from its limits, an instance takes
 * a block of headroom in one script call (GRANT_SCRIPT: N requests, T tokens, P concurrency slots, counted in Redis
 * at once as if used) and admits the next calls from it without a round trip; it gives back what it did not use
 * (RETURN_SCRIPT) when the block's time is up (BLOCK_MS), when it runs dry, or on close(). Nothing is admitted past
 * a limit: every instance's blocks are already in the shared counters, so the others see them as used. Near a
 * limit (less than 100 blocks of headroom left) the grant script admits the call exactly as ADMIT_SCRIPT does,
 * takes nothing, and the instance stops asking for blocks for that key for BLOCK_MS: every call then goes to Redis.
 *
 * Only calls that limit nothing but requests, tokens and concurrency take blocks: a scope with a spend budget or a
 * media limit is admitted per call as before (reservations are per call and settle real amounts).
 */
import type { Admission, Admit, RateHeaders, ScopeLimits, Settle } from './counter-store.js';

/** How long a block may admit calls after its grant (the request entries count it as their time). */
export const BLOCK_MS = 1000;
/** Blocks are at most this many requests and slots, and 1/1000 of the limit. */
const MAX_BLOCK_REQUESTS = 100;
const MAX_BLOCK_SLOTS = 64;
/** Smaller blocks would save too little to be worth the bookkeeping. */
const MIN_BLOCK = 8;
const FRACTION = 1000;
const MAX_NEAR_KEYS = 10_000;

export interface BlockSizes {
  /** Requests (0 when no scope limits requests: the block is bounded by its tokens, slots and time). */
  requests: number;
  /** Tokens (0 when no scope limits tokens). */
  tokens: number;
  /** Concurrency slots (0 when no scope limits them). */
  slots: number;
}

/**
 * The block a call's scopes would take, or undefined when they may not take one (a budget or media limit, limits
 * too small for a block of MIN_BLOCK, a lease too short to outlive a block, a call bigger than the token block).
 */
export function blockSizes(request: Admit): BlockSizes | undefined {
  if (request.costUsd > 0 || request.mediaUnits > 0 || request.leaseMs < 10 * BLOCK_MS) {
    return undefined;
  }
  let requests = Number.POSITIVE_INFINITY;
  let tokens = Number.POSITIVE_INFINITY;
  let slots = Number.POSITIVE_INFINITY;
  for (const { limits } of request.scopes) {
    if (limits.budgetUsd !== undefined || limits.mediaUnitsPerDay !== undefined) {
      return undefined;
    }
    if (limits.rpm !== undefined) {
      requests = Math.min(requests, MAX_BLOCK_REQUESTS, Math.floor(limits.rpm / FRACTION));
    }
    if (limits.tpm !== undefined) {
      tokens = Math.min(tokens, Math.floor(limits.tpm / FRACTION));
    }
    if (limits.maxParallel !== undefined) {
      slots = Math.min(slots, MAX_BLOCK_SLOTS, Math.floor(limits.maxParallel / FRACTION));
    }
  }
  const sizes = {
    requests: requests === Number.POSITIVE_INFINITY ? 0 : requests,
    tokens: tokens === Number.POSITIVE_INFINITY ? 0 : tokens,
    slots: slots === Number.POSITIVE_INFINITY ? 0 : slots,
  };
  if (
    (requests !== Number.POSITIVE_INFINITY && requests < MIN_BLOCK) ||
    (slots !== Number.POSITIVE_INFINITY && slots < MIN_BLOCK) ||
    (tokens !== Number.POSITIVE_INFINITY && tokens < Math.max(1, request.tokens))
  ) {
    return undefined;
  }
  return sizes;
}

interface Block {
  id: string;
  key: string;
  scopes: ScopeLimits[];
  sizes: BlockSizes;
  /** The grant's clock (the calls' `now`) and the wall clock (for the timer that ends idle blocks). */
  grantedAt: number;
  grantedWall: number;
  used: number;
  tokensUsed: number;
  /** Slot names not held by a call. */
  free: string[];
  rates: RateHeaders;
  live: boolean;
}

export interface AllowanceTransport {
  /** Sends GRANT_SCRIPT for one call; resolves to its 10 reply values. */
  grant(blockId: string, sizes: BlockSizes, request: Admit): Promise<Array<number | string>>;
  /** Sends RETURN_SCRIPT's arguments. */
  giveBack(args: Array<string | number>): Promise<unknown>;
  /** The per-call paths (ADMIT_SCRIPT, SETTLE_SCRIPT batches). */
  admit(request: Admit): Promise<Admission>;
  settle(request: Settle): Promise<void>;
  /** Reads an ADMIT_SCRIPT reply (at 0) as an admission. */
  admissionOf(reply: Array<number | string>, scopes: ScopeLimits[]): Admission;
  onGiveBackError(error: unknown): void;
  /** The Redis key prefix of a scope. */
  baseOf(scope: string): string;
}

export interface Allowances {
  admit(request: Admit): Promise<Admission>;
  settle(request: Settle): Promise<void>;
  /** The Redis name of each lease (a call admitted from a block holds the block's slot). */
  renewalNames(leases: ReadonlyMap<string, readonly string[]>): ReadonlyMap<string, readonly string[]>;
  /** Ends every block and gives back what they did not use. */
  close(): Promise<void>;
}

function keyOf(scopes: ScopeLimits[]): string {
  let key = '';
  for (const { scope, limits } of scopes) {
    key += `${scope}|${limits.rpm ?? ''}|${limits.tpm ?? ''}|${limits.maxParallel ?? ''}\n`;
  }
  return key;
}

export function createAllowances(transport: AllowanceTransport, instance: string): Allowances {
  const blocks = new Map<string, Block>();
  /** Keys near a limit: no grant asked until this clock. */
  const nearUntil = new Map<string, number>();
  const pending = new Map<string, Promise<unknown>>();
  /** Calls admitted from a block that hold one of its slots: lease → block and slot. */
  const held = new Map<string, { block: Block; slot: string }>();
  let sequence = 0;
  let returns: Array<string | number> = [];
  let returnCount = 0;
  let returnNow = 0;
  let sending: Promise<unknown> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;

  function take(block: Block, request: Admit): Admission | undefined {
    const { sizes } = block;
    if (
      !block.live ||
      request.now - block.grantedAt >= BLOCK_MS ||
      request.now < block.grantedAt ||
      (sizes.requests > 0 && block.used >= sizes.requests) ||
      (sizes.tokens > 0 && block.tokensUsed + request.tokens > sizes.tokens) ||
      (sizes.slots > 0 && block.free.length === 0)
    ) {
      return undefined;
    }
    block.used++;
    block.tokensUsed += request.tokens;
    if (sizes.slots > 0) {
      held.set(request.lease, { block, slot: block.free.pop()! });
    }
    return { admitted: true, rates: block.rates };
  }

  function retire(block: Block, now: number): void {
    if (!block.live) {
      return;
    }
    block.live = false;
    if (blocks.get(block.key) === block) {
      blocks.delete(block.key);
    }
    const { sizes } = block;
    returns.push(
      block.id,
      sizes.requests,
      Math.min(block.used, sizes.requests),
      sizes.tokens - block.tokensUsed,
      block.free.length,
      ...block.free,
      block.scopes.length,
    );
    for (const { scope, limits } of block.scopes) {
      returns.push(transport.baseOf(scope), limits.rpm ?? '', limits.tpm ?? '');
    }
    block.free = [];
    returnCount++;
    returnNow = Math.max(returnNow, now);
    if (returnCount === 1) {
      setImmediate(sendReturns);
    }
  }

  function sendReturns(): Promise<unknown> {
    if (returnCount === 0) {
      return sending;
    }
    const args = [returnNow, returnCount, ...returns];
    returns = [];
    returnCount = 0;
    sending = transport.giveBack(args).catch((error: unknown) => transport.onGiveBackError(error));
    return sending;
  }

  /** Ends blocks whose time ran out on the wall clock too (a key that went quiet gives its block back). */
  function startTimer(): void {
    timer ??= setInterval(() => {
      const wall = Date.now();
      for (const block of blocks.values()) {
        if (wall - block.grantedWall >= BLOCK_MS) {
          retire(block, block.grantedAt + (wall - block.grantedWall));
        }
      }
      if (blocks.size === 0) {
        clearInterval(timer);
        timer = undefined;
      }
    }, BLOCK_MS);
    timer.unref();
  }

  async function grant(key: string, sizes: BlockSizes, request: Admit): Promise<Admission> {
    const id = `${instance}:b${++sequence}`;
    const reply = await transport.grant(id, sizes, request);
    if (Number(reply[0]) !== 2) {
      if (nearUntil.size >= MAX_NEAR_KEYS) {
        // Keys seen near a limit once and never again must not pile up; forgetting one costs one grant attempt.
        nearUntil.clear();
      }
      nearUntil.set(key, request.now + BLOCK_MS);
      return transport.admissionOf(reply, request.scopes);
    }
    const free: string[] = [];
    for (let j = sizes.slots; j >= 2; j--) {
      free.push(`${id}:p${j}`);
    }
    const rates = transport.admissionOf(reply, request.scopes).rates;
    const block: Block = {
      id,
      key,
      scopes: request.scopes,
      sizes,
      grantedAt: request.now,
      grantedWall: Date.now(),
      used: 1,
      tokensUsed: request.tokens,
      free,
      rates,
      live: true,
    };
    const previous = blocks.get(key);
    if (previous) {
      retire(previous, request.now);
    }
    blocks.set(key, block);
    if (sizes.slots > 0) {
      held.set(request.lease, { block, slot: `${id}:p1` });
    }
    startTimer();
    return { admitted: true, rates };
  }

  return {
    admit(request) {
      const sizes = blockSizes(request);
      if (!sizes) {
        return transport.admit(request);
      }
      const key = keyOf(request.scopes);
      const block = blocks.get(key);
      if (block) {
        const taken = take(block, request);
        if (taken) {
          return Promise.resolve(taken);
        }
        retire(block, request.now);
      }
      const waiting = pending.get(key);
      if (waiting) {
        // One grant at a time per key: the calls that arrive meanwhile take from its block, or go per call.
        return waiting.then(() => {
          const next = blocks.get(key);
          return (next && take(next, request)) || transport.admit(request);
        });
      }
      const near = nearUntil.get(key);
      if (near !== undefined) {
        if (request.now < near && request.now >= near - BLOCK_MS) {
          return transport.admit(request);
        }
        nearUntil.delete(key);
      }
      const granting = grant(key, sizes, request);
      const settled = granting.then(
        () => pending.delete(key),
        () => pending.delete(key),
      );
      pending.set(key, settled);
      return granting;
    },

    settle(request) {
      const holder = held.get(request.lease);
      if (holder) {
        held.delete(request.lease);
        const { block, slot } = holder;
        if (block.live && request.costUsd === 0 && request.mediaUnits === 0) {
          block.free.push(slot);
          block.tokensUsed += request.tokensDelta;
          return Promise.resolve();
        }
        // The block was given back while the call ran: its slot is freed in Redis under the slot's name.
        return transport.settle({ ...request, lease: slot });
      }
      if (request.costUsd === 0 && request.mediaUnits === 0) {
        // A correction of tokens only (no slot to free in Redis): tokens are alike, the live block takes it.
        const block = blocks.get(keyOf(request.scopes));
        if (
          block?.live &&
          block.sizes.tokens > 0 &&
          request.scopes.every(({ limits }) => limits.maxParallel === undefined)
        ) {
          block.tokensUsed += request.tokensDelta;
          return Promise.resolve();
        }
      }
      return transport.settle(request);
    },

    renewalNames(leases) {
      if (held.size === 0) {
        return leases;
      }
      const named = new Map<string, string[]>();
      for (const [scope, list] of leases) {
        named.set(
          scope,
          list.map((lease) => held.get(lease)?.slot ?? lease),
        );
      }
      return named;
    },

    async close() {
      if (timer) {
        clearInterval(timer);
        timer = undefined;
      }
      await Promise.allSettled(pending.values());
      for (const block of [...blocks.values()]) {
        retire(block, block.grantedAt + (Date.now() - block.grantedWall));
      }
      await sendReturns();
      await sending;
    },
  };
}
