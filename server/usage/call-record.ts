/**
 * What one call did, filled in by the route as it learns it (model, provider, tokens), and written as one
 * usage record when the call ends. Streaming routes `defer()` and `complete()` themselves in a `finally`,
 * after the last token, so a stream's record holds what was produced, also when the client went away.
 */
import type { Response } from 'express';
import { callEnded, observers, type CallFacts } from '../observability/hooks.js';
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

/** The facts of a record alone (a copy), without its methods and deployment fields. */
export function factsOf(record: CallFacts): CallFacts {
  return {
    operation: record.operation,
    modelRequested: record.modelRequested,
    model: record.model,
    provider: record.provider,
    usage: record.usage,
    units: record.units,
    media: record.media,
  };
}

/**
 * The facts and the status, as one literal. Not `{ ...record, status }`: a spread copies the record's methods
 * too, and a spread followed by more properties cost 25–75 µs a call in a profile at 1k req/s (the clone's map
 * is not shared, so every property added after it takes V8's slow path); a literal keeps one map.
 */
function endedFacts(record: CallFacts, status: number): CallFacts & { status: number } {
  return {
    operation: record.operation,
    modelRequested: record.modelRequested,
    model: record.model,
    provider: record.provider,
    usage: record.usage,
    units: record.units,
    media: record.media,
    status,
  };
}

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
  let ended: { status: number; costUsd: number } | undefined;
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
        notify(listener, endedFacts(record, ended.status), ended.costUsd);
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
    let costUsd = costOf && key ? costOf(record) : 0;
    if (listeners) {
      const facts = endedFacts(record, status);
      for (const listener of listeners) {
        costUsd = notify(listener, facts, costUsd);
      }
    }
    ended = { status, costUsd };
    if (observers.metrics || observers.tracing) {
      callEnded(
        {
          operation: record.operation,
          modelRequested: record.modelRequested,
          model: record.model,
          provider: record.provider,
          usage: record.usage,
          units: record.units,
          media: record.media,
          status,
          startedAt: perfStart,
          headAt: (res as { headAt?: number }).headAt,
          errorCode: res.locals.errorCode as string | undefined,
          keyId: key?.id,
          costUsd,
        },
        res,
      );
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
