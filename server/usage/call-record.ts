/**
 * What one call did, filled in by the route as it learns it (model, provider, tokens), and written as one
 * usage record when the call ends. Streaming routes `defer()` and `complete()` themselves in a `finally`,
 * after the last token, so a stream's record holds what was produced, also when the client went away.
 */
import type { Response } from 'express';
import { callEnded, observers, type CallFacts, type CallOutcome } from '../observability/hooks.js';
import type { UsageRecorder } from './usage-recorder.js';

export interface CallRecord extends CallFacts {
  /** The deployment that served the call and the upstream attempts made (models with deployments only). */
  deployment?: string | null;
  attempts?: number | null;
  /** The same for the search step of a search answer (its writer's are `deployment` and `attempts`). */
  searchDeployment?: string | null;
  searchAttempts?: number | null;
  /** The route will call `complete` itself (streams). */
  defer(): void;
  /** Writes the usage record once; later calls do nothing. */
  complete(status?: number): void;
  /**
   * Runs `listener` when the record is written (at once if it was): the limits settle a call's real figures
   * here. It gets the call's cost and may return the cost to record instead (a video's, known at creation).
   */
  whenEnded(listener: CallEndListener): void;
}

export type CallEndListener = (facts: CallFacts & { status: number }, costUsd: number) => number | undefined;

/** What a call cost, from its facts (limits/prices.ts); 0 when no price table is given. */
export type CostOf = (facts: CallFacts) => number;

/**
 * A call's outcome: its record's facts (a copy, without the record's methods and deployment fields) and how it
 * ended. One literal with every field named, not `{ ...record, status, … }`: a spread followed by more properties
 * gives V8 an object whose map is not shared, and each property added after it takes the slow path (~25 µs a
 * call in a profile at 1k req/s, bench/README.md).
 */
export function callOutcome(
  record: CallFacts,
  status: number,
  costUsd: number,
  timing: { startedAt: number; headAt: number | undefined } = NO_TIMING,
  errorCode?: string,
  keyId?: string,
): CallOutcome {
  return {
    operation: record.operation,
    modelRequested: record.modelRequested,
    model: record.model,
    provider: record.provider,
    usage: record.usage,
    units: record.units,
    media: record.media,
    status,
    startedAt: timing.startedAt,
    headAt: timing.headAt,
    errorCode,
    keyId,
    costUsd,
  };
}

/** The timing of an outcome nobody times (a tool call's, for its cost listeners). */
const NO_TIMING = { startedAt: 0, headAt: undefined };

const NO_LISTENERS: readonly CallEndListener[] = [];

/** The operation of a call that no handler has taken (yet): refused by auth, the parser or the validator. */
export const UNKNOWN_OPERATION = 'unknown';

/**
 * `perfStart`: `performance.now()` when the request arrived (request-start.ts), for the metrics' latency
 * histograms; the record's own clock (`now`) may be a test's.
 */
export function startCallRecord(
  res: Response,
  recorder: UsageRecorder,
  now: () => number = Date.now,
  perfStart = performance.now(),
  costOf?: CostOf,
): CallRecord {
  const startedAt = now();
  let deferred = false;
  /** Tells the recorder the deferred record came (see `UsageRecorder.expect`). */
  let arrived: (() => void) | undefined;
  let done = false;
  let listeners: CallEndListener[] | undefined;
  let ended: CallOutcome | undefined;
  function notify(listener: CallEndListener, facts: CallFacts & { status: number }, costUsd: number): number {
    return listener(facts, costUsd) ?? costUsd;
  }
  const record: CallRecord = {
    operation: UNKNOWN_OPERATION,
    modelRequested: null,
    model: null,
    provider: null,
    usage: null,
    units: null,
    media: null,
    defer() {
      if (!deferred) {
        deferred = true;
        arrived = recorder.expect();
      }
    },
    whenEnded(listener) {
      if (ended) {
        notify(listener, ended, ended.costUsd);
      } else {
        (listeners ??= []).push(listener);
      }
    },
    complete(status = res.statusCode) {
      if (done) {
        return;
      }
      done = true;
      try {
        writeRecord(status);
      } finally {
        arrived?.();
      }
    },
  };
  function writeRecord(status: number): void {
    const key = res.locals.apiKey;
    // The limits' listeners and the observers read the same outcome.
    const outcome = callOutcome(
      record,
      status,
      costOf && key ? costOf(record) : 0,
      { startedAt: perfStart, headAt: (res as { headAt?: number }).headAt },
      res.locals.errorCode as string | undefined,
      key?.id,
    );
    for (const listener of listeners ?? NO_LISTENERS) {
      outcome.costUsd = notify(listener, outcome, outcome.costUsd);
    }
    ended = outcome;
    const costUsd = outcome.costUsd;
    if (observers.metrics || observers.tracing) {
      callEnded(outcome, res);
    }
    // Unauthenticated calls are logged, not recorded: a flood of bad keys must not grow the database.
    if (!key) {
      return;
    }
    recorder.record({
      requestId: res.locals.requestId,
      keyId: key.id,
      operation: record.operation,
      modelRequested: record.modelRequested,
      model: record.model,
      provider: record.provider,
      inputTokens: record.usage?.inputTokens ?? 0,
      outputTokens: record.usage?.outputTokens ?? 0,
      cachedInputTokens: record.usage?.cacheReadTokens ?? 0,
      cacheWriteTokens: record.usage?.cacheWriteTokens ?? 0,
      reasoningTokens: record.usage?.reasoningTokens ?? 0,
      units: record.units,
      media: record.media,
      costUsd,
      status,
      latencyMs: Math.max(0, Math.round(now() - startedAt)),
      createdAt: Math.floor(startedAt / 1000),
      deployment: record.deployment ?? null,
      attempts: record.attempts ?? null,
      searchDeployment: record.searchDeployment ?? null,
      searchAttempts: record.searchAttempts ?? null,
    });
  }
  res.on('close', () => {
    if (!deferred) {
      // Closed before the answer was fully written: the client left (a download cut short), which is 499.
      record.complete(res.writableFinished ? res.statusCode : 499);
    }
  });
  return record;
}
