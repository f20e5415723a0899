/**
 * The retry layer's bookkeeping, which the healthy path makes cheap (issue 31): the retry state is made only at a
 * failure, the in-process breakers answer without a promise, and a committed body is resumed by one iterator.
 * These say that retries, backoff, `Retry-After`, the budget's 504 and the end of a stream still behave, with the
 * in-process breakers and with breakers that answer with promises (as the Redis ones do).
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { ApiError, UpstreamError } from '../../core/api-error.js';
import type { AttemptOutcome, CallContext } from '../../core/call-context.js';
import type { ChatModel, PassthroughResponse } from '../../core/chat.js';
import { type CircuitBreakers, createMemoryBreakers } from './circuit-breaker.js';
import { deployedModel } from './deployed-model.js';
import { type ResiliencePlan, runResilient, type Target } from './resilience-plan.js';
import { createDeploymentStats } from './select-deployments.js';

const unavailable = (id: string) => new UpstreamError(id, 502, 503, `Upstream ${id} failed (503)`);
const rateLimited = (id: string, retryAfter: string) => UpstreamError.fromStatus(id, 429, 'slow down', retryAfter);

function plan<M>(targets: Array<Target<M>>, overrides: Partial<ResiliencePlan<M>> = {}): ResiliencePlan<M> {
  return {
    modelId: 'smart',
    deployments: targets,
    strategy: 'weighted',
    retries: 2,
    fallbacks: () => [],
    contextWindowFallbacks: () => [],
    budgetMs: 10_000,
    backoffMs: 1,
    maxBackoffMs: 50,
    ...overrides,
  };
}

function target<M>(id: string, weight = 1): Target<M> {
  return { id, provider: id, weight, upstreamModel: id, model: () => ({}) as M };
}

/** The memory breakers with every answer turned into a promise, as the Redis breakers give them. */
function promised(breakers: CircuitBreakers): CircuitBreakers {
  return {
    acquire: async (id) => breakers.acquire(id),
    success: async (id, permit) => breakers.success(id, permit),
    failure: async (id, permit) => breakers.failure(id, permit),
    release: async (id, permit) => breakers.release(id, permit),
    state: (id) => breakers.state(id),
    close: () => breakers.close(),
  };
}

const kinds: Array<[string, () => CircuitBreakers]> = [
  ['in-process breakers', () => createMemoryBreakers({ failureThreshold: 5, cooldownMs: 60_000 })],
  [
    'breakers answering with promises',
    () => promised(createMemoryBreakers({ failureThreshold: 5, cooldownMs: 60_000 })),
  ],
];

function context(outcomes: AttemptOutcome[] = [], signal = new AbortController().signal): CallContext {
  return { signal, requestId: 'req_1', warn: () => undefined, attempted: (outcome) => outcomes.push(outcome) };
}

describe.each(kinds)('the retry loop with %s', (_name, makeBreakers) => {
  it('retries the same deployment after a failure, with backoff, until it answers', async () => {
    const breakers = makeBreakers();
    const stats = createDeploymentStats();
    const tries: string[] = [];
    const outcomes: AttemptOutcome[] = [];
    const committed = await runResilient(
      plan([target<string>('a')]),
      { breakers, stats, random: () => 0.5 },
      context(outcomes),
      async (t) => {
        tries.push(t.id);
        if (tries.length < 3) {
          throw unavailable(t.id);
        }
        return 'answer';
      },
    );
    committed.done();
    expect(committed.value).toBe('answer');
    expect(tries).toEqual(['a', 'a', 'a']);
    expect(outcomes).toEqual([{ deployment: 'a', provider: 'a', attempts: 3 }]);
    expect(stats.get('a').inFlight).toBe(0);
    // Two failures counted, then the answer closed the circuit again.
    expect(await breakers.state('a')).toEqual({ state: 'closed', failures: 0 });
  });

  it('moves to the next deployment after a failure, and a Retry-After past the bound takes one out of the call', async () => {
    const tries: string[] = [];
    const committed = await runResilient(
      plan([target<string>('a', 1000), target<string>('b', 1)], { retries: 3 }),
      { breakers: makeBreakers(), stats: createDeploymentStats(), random: () => 0 },
      context(),
      async (t) => {
        tries.push(t.id);
        if (t.id === 'a') {
          throw rateLimited('a', '60');
        }
        if (tries.length < 4) {
          throw unavailable('b');
        }
        return t.id;
      },
    );
    // a asked for 60 s (past max_backoff_ms): it sits out, and b is tried again instead.
    expect(tries).toEqual(['a', 'b', 'b', 'b']);
    expect(committed.value).toBe('b');
  });

  it('answers 504 upstream_timeout when the budget ends during an attempt, and stops that attempt', async () => {
    const breakers = makeBreakers();
    const stats = createDeploymentStats();
    const outcomes: AttemptOutcome[] = [];
    const caller = new AbortController();
    let seen: AbortSignal | undefined;
    const failure = await runResilient(
      plan([target<string>('a'), target<string>('b')], { budgetMs: 30 }),
      { breakers, stats, random: () => 0 },
      context(outcomes, caller.signal),
      (_t, signal) => {
        seen = signal;
        // Hangs until its signal is aborted, like an upstream that never answers.
        return new Promise<string>((_resolve, reject) =>
          signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }),
        );
      },
    ).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApiError);
    expect((failure as ApiError).status).toBe(504);
    expect((failure as ApiError).code).toBe('upstream_timeout');
    expect(seen?.aborted).toBe(true);
    // Not retried past the budget; counted against the deployment; the caller's signal is left as it was.
    expect(outcomes).toEqual([{ deployment: 'a', provider: 'a', attempts: 1 }]);
    expect((await breakers.state('a')).failures).toBe(1);
    expect(stats.get('a').inFlight).toBe(0);
    expect(caller.signal.aborted).toBe(false);
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
  });

  it('stops the budget at the commit: a committed call is not aborted when the budget would have ended', async () => {
    let seen: AbortSignal | undefined;
    const committed = await runResilient(
      plan([target<string>('a')], { budgetMs: 20 }),
      { breakers: makeBreakers(), stats: createDeploymentStats() },
      context(),
      async (_t, signal) => {
        seen = signal;
        return 'head';
      },
    );
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(seen?.aborted).toBe(false);
    committed.done();
  });
});

describe('a passthrough body through the retry layer', () => {
  function passthroughModel(pieces: Array<Uint8Array | Error>): ChatModel {
    return {
      provider: 'p',
      modelId: 'm',
      generate: () => Promise.reject(new Error('unused')),
      countTokens: () => Promise.resolve(0),
      stream: async function* () {},
      passthrough: {
        'openai-chat': {
          forward: async (): Promise<PassthroughResponse> => ({
            status: 200,
            headers: { 'content-type': 'application/json' },
            body: (async function* () {
              for (const piece of pieces) {
                if (piece instanceof Error) {
                  throw piece;
                }
                yield piece;
              }
            })(),
          }),
        },
      },
    };
  }

  function deployed(pieces: Array<Uint8Array | Error>) {
    const stats = createDeploymentStats();
    const model = passthroughModel(pieces);
    const chat = deployedModel(
      'chat',
      plan([
        { ...target<ChatModel>('a', 1000), model: () => model },
        { ...target<ChatModel>('b', 1), model: () => model },
      ]),
      { breakers: createMemoryBreakers({ failureThreshold: 5, cooldownMs: 60_000 }), stats, random: () => 0 },
    );
    return { chat, stats };
  }

  const bytes = (text: string) => new TextEncoder().encode(text);

  it('relays every piece in order and ends the call (in flight back to 0, caller listener gone)', async () => {
    const { chat, stats } = deployed([bytes('{"a":'), bytes('1'), bytes('}')]);
    const caller = new AbortController();
    const response = await chat.passthrough!['openai-chat']!.forward({ model: 'a' }, context([], caller.signal));
    expect(stats.get('a').inFlight).toBe(1);
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(1);
    const read: string[] = [];
    for await (const piece of response.body) {
      read.push(new TextDecoder().decode(piece));
    }
    expect(read).toEqual(['{"a":', '1', '}']);
    expect(stats.get('a').inFlight).toBe(0);
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
  });

  it('ends the call when the reader stops early, and when the body breaks after its first bytes', async () => {
    const early = deployed([bytes('1'), bytes('2'), bytes('3')]);
    const response = await early.chat.passthrough!['openai-chat']!.forward({ model: 'a' }, context());
    for await (const _piece of response.body) {
      break;
    }
    expect(early.stats.get('a').inFlight).toBe(0);

    const broken = deployed([bytes('1'), new Error('reset')]);
    const second = await broken.chat.passthrough!['openai-chat']!.forward({ model: 'a' }, context());
    await expect(async () => {
      for await (const _piece of second.body) {
        // read on
      }
    }).rejects.toThrow('reset');
    // After the first bytes a failure is the caller's, not retried: b was never called.
    expect(broken.stats.get('a').inFlight).toBe(0);
    expect(broken.stats.get('b').inFlight).toBe(0);
  });

  it('ends at once a call whose body was empty', async () => {
    const { chat, stats } = deployed([]);
    const response = await chat.passthrough!['openai-chat']!.forward({ model: 'a' }, context());
    expect(await response.body[Symbol.asyncIterator]().next()).toEqual({ done: true, value: undefined });
    expect(stats.get('a').inFlight).toBe(0);
  });
});
