/**
 * Limits on every authenticated call, in two steps. `begin` runs where a call starts (routes/mount-operations.ts
 * for every operation, routes/mcp-server.ts for every MCP tool call): it reserves the call's request, its
 * concurrency slot and its estimated tokens, media units and cost in the key's and the project's counters, or
 * refuses it (429 `rate_limit_exceeded` with Retry-After, or `insufficient_quota` when the budget is spent). The
 * call's usage record settles the real figures when it is written (usage/call-record.ts), a stream's after
 * its last token. A limited key's answers carry OpenAI's `x-ratelimit-*` headers.
 *
 * When the counters cannot be reached (Redis down), `onStoreDown` decides: `allow` (the default) lets the call
 * through unlimited, with an error log and a metric; `deny` refuses it with a 503.
 */
import type { Logger } from 'pino';
import { ApiError } from '../core/api-error.js';
import type { Limits } from '../core/limits.js';
import type { MediaUsage, ModelType } from '../core/models.js';
import { observers } from '../observability/hooks.js';
import type { ApiKeyRecord } from '../storage/key-store.js';
import type { CallRecord } from '../usage/call-record.js';
import type { Admission, CounterStore, RateHeaders, RateState, ScopeLimits } from './counter-store.js';
import { type CallEstimate, estimateCall, estimatedMediaUnits } from './estimate.js';
import { mediaCost, type PriceTable, tokenCost } from './prices.js';

/** Where a key's limits come from: its own (merged over the config's defaults) and its project's. */
export interface LimitsSource {
  limitsFor(key: ApiKeyRecord): { key: Limits; project?: { name: string; limits: Limits } };
}

/** A key record as the admin API stores it: a project and limits of its own, both optional. */
type KeyWithLimits = ApiKeyRecord & { project?: string | null; limits?: Limits };

/**
 * The config's defaults under each key's own limits (a field the key sets wins), and the project's limits
 * by name. Reads `limits` and `project` off the key record when the key store keeps them.
 */
export function recordLimitsSource(
  defaults: Limits,
  projectLimits: (name: string) => Limits | undefined = () => undefined,
): LimitsSource {
  // A key record's limits merged over the defaults, once per limits object (a cached key record keeps its object).
  const merged = new WeakMap<Limits, Limits>();
  return {
    limitsFor(key) {
      const { limits, project } = key as KeyWithLimits;
      let own = defaults;
      if (limits) {
        own = merged.get(limits) ?? { ...defaults, ...definedFields(limits) };
        merged.set(limits, own);
      }
      const group = project ? projectLimits(project) : undefined;
      return { key: own, project: project && group ? { name: project, limits: group } : undefined };
    },
  };
}

function definedFields(limits: Limits): Limits {
  return Object.fromEntries(Object.entries(limits).filter(([, value]) => value !== undefined && value !== null));
}

function limitsSomething(limits: Limits): boolean {
  return (
    limits.rpm !== undefined ||
    limits.tpm !== undefined ||
    limits.maxParallel !== undefined ||
    limits.mediaUnitsPerDay !== undefined ||
    limits.budgetUsd !== undefined
  );
}

export interface CallLimiterOptions {
  counters: CounterStore;
  source: LimitsSource;
  prices: PriceTable;
  /** Resolves a requested model name as the operation's type, for its price; undefined when it does not resolve. */
  resolveModel(
    requested: string | undefined,
    type: ModelType,
    key: ApiKeyRecord,
  ): { id: string; provider: string } | undefined;
  logger: Logger;
  onStoreDown: 'allow' | 'deny';
  /** How long a call's concurrency slot and reservation live without renewal (a crashed call's expire after it). */
  leaseMs: number;
  now?: () => number;
}

export interface BeginCall {
  key: ApiKeyRecord;
  call: CallRecord;
  /** The operationId, or `mcpPost:<tool>`. */
  operation: string;
  body: unknown;
  /** The request body's size in bytes (Content-Length), for the token estimate. */
  bodyBytes: number;
  requestId: string;
  /** Sets a header on the answer while it has not started. */
  setHeader(name: string, value: string): void;
}

export interface CallLimiter {
  /**
   * Undefined when no limit applies to the key (nothing to wait for); otherwise a promise that resolves once
   * the call is admitted (its settlement tied to `call`'s end) and rejects with the refusal's ApiError.
   */
  begin(input: BeginCall): Promise<void> | undefined;
  /**
   * Counts work done for a key outside any call (the background embedding of its files' passages): its tokens
   * in the tokens per minute and its cost in the spend budget of the key and its project, settled at once. Nothing
   * is admitted or refused here (the upload that caused the work was admitted); a spent budget or a full token
   * bucket refuses the key's next calls. Never rejects (an unreachable store is logged like a settlement's).
   */
  charge(input: { key: ApiKeyRecord; tokens: number; costUsd: number }): Promise<void>;
}

/**
 * The media units a call produced, by the kind it estimated: images for images, characters for speech (not the
 * seconds of audio they became), seconds for music, video and the audio a transcription heard. Other calls (image understanding, uploads,
 * searches) produce no media units, whatever their record counts.
 */
function mediaUnitsOf(estimate: CallEstimate, media: MediaUsage | null): number {
  if (!media) {
    return 0;
  }
  switch (estimate.type) {
    case 'image':
      return media.images ?? 0;
    case 'speech':
      return media.characters ?? 0;
    case 'music':
    case 'video':
    case 'transcription':
      return media.seconds ?? 0;
    default:
      return 0;
  }
}

/** Operations whose usage record is completed later (a video's seconds): they settle at their estimate. */
const SETTLED_AT_ESTIMATE = new Set(['createVideo', 'remixVideo', 'mcpPost:create_video']);

/** OpenAI's duration form: `20ms`, `1.5s`, `6m0s`. */
export function formatReset(ms: number): string {
  const whole = Math.max(0, Math.ceil(ms));
  if (whole < 1000) {
    return `${whole}ms`;
  }
  if (whole < 60_000) {
    return `${Number((whole / 1000).toFixed(3))}s`;
  }
  return `${Math.floor(whole / 60_000)}m${Math.ceil((whole % 60_000) / 1000)}s`;
}

/**
 * The `x-ratelimit-*` headers of a figures object, formatted once: the calls admitted from one local allowance
 * (redis-allowance.ts) share the block's figures, so each of them only sets the six strings.
 */
const formattedRates = new WeakMap<RateHeaders, string[]>();

function setRateHeaders(rates: RateHeaders, setHeader: BeginCall['setHeader']): void {
  let headers = formattedRates.get(rates);
  if (!headers) {
    const list: string[] = [];
    const write = (kind: 'requests' | 'tokens', state: RateState | undefined) => {
      if (state) {
        list.push(`x-ratelimit-limit-${kind}`, String(state.limit));
        list.push(`x-ratelimit-remaining-${kind}`, String(state.remaining));
        list.push(`x-ratelimit-reset-${kind}`, formatReset(state.resetMs));
      }
    };
    write('requests', rates.requests);
    write('tokens', rates.tokens);
    headers = list;
    formattedRates.set(rates, list);
  }
  for (let at = 0; at < headers.length; at += 2) {
    setHeader(headers[at]!, headers[at + 1]!);
  }
}

const REFUSAL_TEXT: Record<Exclude<Admission, { admitted: true }>['kind'], string> = {
  rpm: 'requests per minute',
  tpm: 'tokens per minute',
  parallel: 'concurrent requests',
  media: 'media units per day',
  budget: 'spend budget',
};

function refusal(admission: Extract<Admission, { admitted: false }>): ApiError {
  const owner = admission.scope.startsWith('project:') ? "this key's project" : 'this key';
  const seconds = Math.max(1, Math.ceil(admission.retryAfterMs / 1000));
  if (admission.kind === 'budget') {
    return new ApiError(429, `The spend budget of ${owner} is used up; ask the operator to raise it.`, {
      type: 'insufficient_quota',
      code: 'insufficient_quota',
      retryable: false,
    });
  }
  return new ApiError(
    429,
    `Rate limit reached: the ${REFUSAL_TEXT[admission.kind]} of ${owner}; retry after ${seconds} seconds.`,
    { code: 'rate_limit_exceeded', headers: { 'retry-after': String(seconds) } },
  );
}

export function createCallLimiter(options: CallLimiterOptions): CallLimiter {
  const now = options.now ?? Date.now;
  let sequence = 0;
  let lastStoreLog = 0;
  let unloggedFailures = 0;

  function storeFailed(error: unknown, what: string): void {
    observers.metrics?.limitsStoreFailed?.();
    unloggedFailures++;
    const at = Date.now();
    // One line per 5 s at most: a Redis outage under load must not flood the log.
    if (at - lastStoreLog >= 5000) {
      options.logger.error(
        { err: error, failures: unloggedFailures, onStoreDown: options.onStoreDown },
        `limit counters unreachable (${what}); calls are ${options.onStoreDown === 'allow' ? 'allowed unlimited' : 'refused'}`,
      );
      lastStoreLog = at;
      unloggedFailures = 0;
    }
  }

  function estimatedCost(estimate: CallEstimate, key: ApiKeyRecord): number {
    if (!estimate.type) {
      return 0;
    }
    const model = options.resolveModel(estimate.model, estimate.type, key);
    const price = model ? options.prices.priceOf(model.id, model.provider) : undefined;
    if (!price) {
      return 0;
    }
    return (
      tokenCost(price, { inputTokens: estimate.inputTokens, outputTokens: estimate.outputTokens }) +
      mediaCost(price, {
        images: estimate.images,
        characters: estimate.characters,
        seconds: estimate.seconds,
      })
    );
  }

  async function admit(input: BeginCall, scopes: ScopeLimits[]): Promise<void> {
    const estimate = estimateCall(input.operation, input.body, input.bodyBytes);
    const tokens = estimate.inputTokens + estimate.outputTokens;
    const parallel = scopes.some(({ limits }) => limits.maxParallel !== undefined);
    const tokensLimited = scopes.some(({ limits }) => limits.tpm !== undefined);
    const budgeted = scopes.some(({ limits }) => limits.budgetUsd !== undefined);
    const mediaLimited = scopes.some(({ limits }) => limits.mediaUnitsPerDay !== undefined);
    // Spend and media are counted only where a scope limits them: the usage records report them anyway.
    const atEstimateOp = SETTLED_AT_ESTIMATE.has(input.operation);
    const estimateUsd = budgeted || atEstimateOp ? estimatedCost(estimate, input.key) : 0;
    const costUsd = budgeted ? estimateUsd : 0;
    const mediaUnits = mediaLimited ? estimatedMediaUnits(estimate) : 0;
    const lease = `${input.requestId}:${++sequence}`;
    let admission: Admission;
    try {
      admission = await options.counters.admit({
        scopes,
        lease,
        now: now(),
        leaseMs: options.leaseMs,
        tokens,
        costUsd,
        mediaUnits,
        spends: estimate.type !== undefined || tokens > 0,
      });
    } catch (error) {
      storeFailed(error, 'admit');
      if (options.onStoreDown === 'deny') {
        throw new ApiError(503, 'Limits cannot be checked right now (their store is unreachable); retry shortly.', {
          code: 'limits_unavailable',
          headers: { 'retry-after': '1' },
          expected: true,
        });
      }
      return;
    }
    setRateHeaders(admission.rates, input.setHeader);
    if (!admission.admitted) {
      throw refusal(admission);
    }
    const reserves = costUsd > 0 || mediaUnits > 0;
    // Only rates limited: nothing is held while the call runs, and nothing to settle when it ends.
    if (!parallel && !tokensLimited && !budgeted && !mediaLimited && !reserves) {
      return;
    }
    // Long calls (streams) keep their slot and reservation: one timer renews every call in flight.
    const held = parallel || reserves;
    if (held) {
      inFlight.set(lease, scopes);
      if (!renewing) {
        renewing = true;
        startRenewals();
      }
    }
    input.call.whenEnded((facts, recordedCost) => {
      inFlight.delete(lease);
      const atEstimate = atEstimateOp && facts.status < 400;
      const settledCost = atEstimate ? estimateUsd : recordedCost;
      const countedCost = budgeted ? settledCost : 0;
      const usage = facts.usage;
      const actualTokens = usage && tokens > 0 ? usage.inputTokens + usage.outputTokens : 0;
      const actualMedia = !mediaLimited
        ? 0
        : atEstimate
          ? estimatedMediaUnits(estimate)
          : mediaUnitsOf(estimate, facts.media);
      const tokensDelta = tokensLimited ? actualTokens - tokens : 0;
      // Nothing held and nothing to correct: no round trip to the counters.
      if (!held && tokensDelta === 0 && countedCost <= 0 && actualMedia <= 0) {
        return settledCost;
      }
      options.counters
        .settle({ scopes, lease, now: now(), tokensDelta, costUsd: countedCost, mediaUnits: actualMedia })
        .catch((error) => storeFailed(error, 'settle'));
      return settledCost;
    });
  }

  /**
   * Calls holding a slot or a reservation, by lease: renewed together every half lease while any runs, in one
   * store call with the leases grouped by scope (with Redis, one script call per 1,000 leases, not one per call).
   */
  const inFlight = new Map<string, ScopeLimits[]>();
  let renewing = false;
  function startRenewals(): void {
    const timer = setInterval(() => {
      if (inFlight.size === 0) {
        clearInterval(timer);
        renewing = false;
        return;
      }
      options.counters
        .renewLeases(leasesByScope(inFlight), now(), options.leaseMs)
        .catch((error) => storeFailed(error, 'renew'));
    }, options.leaseMs / 2);
    timer.unref();
  }

  function scopesOf(record: ApiKeyRecord): ScopeLimits[] {
    const { key, project } = options.source.limitsFor(record);
    const scopes: ScopeLimits[] = [];
    if (limitsSomething(key)) {
      scopes.push({ scope: `key:${record.id}`, limits: key });
    }
    if (project && limitsSomething(project.limits)) {
      scopes.push({ scope: `project:${project.name}`, limits: project.limits });
    }
    return scopes;
  }

  return {
    begin(input) {
      const scopes = scopesOf(input.key);
      return scopes.length === 0 ? undefined : admit(input, scopes);
    },
    async charge({ key, tokens, costUsd }) {
      const scopes = scopesOf(key);
      const tokensLimited = scopes.some(({ limits }) => limits.tpm !== undefined);
      const budgeted = scopes.some(({ limits }) => limits.budgetUsd !== undefined);
      const tokensDelta = tokensLimited ? tokens : 0;
      const counted = budgeted ? costUsd : 0;
      if (tokensDelta <= 0 && counted <= 0) {
        return;
      }
      // A lease no call holds: the settlement only adds the tokens and the spend.
      const lease = `background:${key.id}:${++sequence}`;
      await options.counters
        .settle({ scopes, lease, now: now(), tokensDelta, costUsd: counted, mediaUnits: 0 })
        .catch((error) => storeFailed(error, 'settle'));
    },
  };
}

/** The leases in flight grouped by scope, as `CounterStore.renewLeases` takes them. */
export function leasesByScope(inFlight: ReadonlyMap<string, readonly ScopeLimits[]>): Map<string, string[]> {
  const byScope = new Map<string, string[]>();
  for (const [lease, scopes] of inFlight) {
    for (const { scope } of scopes) {
      const list = byScope.get(scope);
      if (list) {
        list.push(lease);
      } else {
        byScope.set(scope, [lease]);
      }
    }
  }
  return byScope;
}
