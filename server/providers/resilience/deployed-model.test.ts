/**
 * The retry layer over models made in the test (no HTTP): a stream is committed at its first part (a failure
 * after it reaches the caller, never retried), a video task resumes on the deployment its checkpoint names
 * and moves on when that one's circuit is open, and the strategies order deployments as they say.
 */
import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../core/api-error.js';
import type { AttemptOutcome, CallContext } from '../../core/call-context.js';
import type { ChatModel, ChatStreamPart } from '../../core/chat.js';
import type { AudioContainer, TranscriptionModel, VideoModel, VideoTaskContext } from '../../core/models.js';
import { createMemoryBreakers } from './circuit-breaker.js';
import { commonAcceptedFormats, deployedModel } from './deployed-model.js';
import type { ResiliencePlan, Target } from './resilience-plan.js';
import { createDeploymentStats, orderDeployments } from './select-deployments.js';

const unavailable = (id: string) => new UpstreamError(id, 502, 503, `Upstream ${id} failed (503)`);

function plan<M>(targets: Array<Target<M>>, retries = 2): ResiliencePlan<M> {
  return {
    modelId: 'smart',
    deployments: targets,
    strategy: 'weighted',
    retries,
    fallbacks: () => [],
    contextWindowFallbacks: () => [],
    budgetMs: 10_000,
    backoffMs: 1,
    maxBackoffMs: 10,
  };
}

function target<M>(id: string, model: M, weight = 1): Target<M> {
  return { id, provider: id.split(':')[0]!, weight, upstreamModel: id, model: () => model };
}

function context(outcomes: AttemptOutcome[] = []): CallContext {
  return {
    signal: new AbortController().signal,
    requestId: 'req_1',
    warn: () => undefined,
    attempted: (outcome) => outcomes.push(outcome),
  };
}

function streamingModel(id: string, script: Array<ChatStreamPart | Error>, calls: string[]): ChatModel {
  return {
    provider: id,
    modelId: id,
    generate: () => Promise.reject(new Error('unused')),
    countTokens: () => Promise.resolve(0),
    async *stream() {
      calls.push(id);
      for (const step of script) {
        if (step instanceof Error) {
          throw step;
        }
        yield step;
      }
    },
  };
}

const runtime = () => ({
  breakers: createMemoryBreakers({ failureThreshold: 1, cooldownMs: 60_000 }),
  stats: createDeploymentStats(),
  random: () => 0,
});

describe('deployed chat model', () => {
  it('retries a stream that fails before its first part, and hands a later failure to the caller', async () => {
    const calls: string[] = [];
    const finish: ChatStreamPart = { type: 'finish', finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 1 } };
    const model = deployedModel(
      'chat',
      plan([
        target('a', streamingModel('a', [unavailable('a')], calls), 1000),
        target('b', streamingModel('b', [{ type: 'text-delta', text: 'hi' }, unavailable('b'), finish], calls), 1),
      ]),
      runtime(),
    );
    const outcomes: AttemptOutcome[] = [];
    const parts: ChatStreamPart[] = [];
    await expect(async () => {
      for await (const part of model.stream({ messages: [] }, context(outcomes))) {
        parts.push(part);
      }
    }).rejects.toThrow('Upstream b failed');
    expect(calls).toEqual(['a', 'b']);
    expect(parts).toEqual([{ type: 'text-delta', text: 'hi' }]);
    expect(outcomes).toEqual([{ deployment: 'b', provider: 'b', attempts: 2 }]);
  });
});

describe('deployed video model', () => {
  function videoModel(id: string, log: string[], fail = false): VideoModel {
    return {
      provider: id,
      modelId: id,
      async generate(_options, ctx) {
        log.push(`${id}:${ctx.checkpoint.get() ?? 'fresh'}`);
        ctx.checkpoint.set(`job-${id}`);
        if (fail) {
          throw unavailable(id);
        }
        return { video: { data: new Uint8Array([1]), mediaType: 'video/mp4' }, usage: { seconds: 1 } };
      },
    };
  }

  function taskContext(stored: { value?: string }): VideoTaskContext {
    return {
      ...context(),
      progress: () => undefined,
      checkpoint: { get: () => stored.value, set: (value) => void (stored.value = value) },
    };
  }

  const options = { prompt: 'p', seconds: 1, width: 64, height: 64 };

  it("resumes on the deployment whose job the checkpoint names, and hides another deployment's job", async () => {
    const log: string[] = [];
    const model = deployedModel(
      'video',
      plan([target('a', videoModel('a', log), 1000), target('b', videoModel('b', log), 1)]),
      runtime(),
    );
    const stored = { value: JSON.stringify({ d: 'b', v: 'job-b-old' }) };
    await model.generate(options, taskContext(stored));
    expect(log).toEqual(['b:job-b-old']);
    expect(JSON.parse(stored.value!)).toEqual({ d: 'b', v: 'job-b' });
  });

  it('moves to another deployment when the one that failed has its circuit open', async () => {
    const log: string[] = [];
    const shared = runtime();
    const model = deployedModel(
      'video',
      plan([target('a', videoModel('a', log, true), 1000), target('b', videoModel('b', log), 1)], 0),
      shared,
    );
    const stored: { value?: string } = {};
    await expect(model.generate(options, taskContext(stored))).rejects.toThrow('Upstream a failed');
    // The queue's next attempt: a's circuit is open (threshold 1), so b starts a job of its own.
    await model.generate(options, taskContext(stored));
    expect(log).toEqual(['a:fresh', 'b:fresh']);
  });
});

describe('deployed transcription model', () => {
  it('converts into a container every deployment takes, so the one that serves accepts the audio', () => {
    expect(commonAcceptedFormats([{}, {}])).toBeUndefined();
    expect(commonAcceptedFormats([{}, { acceptedFormats: ['wav', 'mp3'] }])).toEqual(['wav', 'mp3']);
    expect(
      commonAcceptedFormats([{ acceptedFormats: ['flac', 'mp3', 'wav'] }, {}, { acceptedFormats: ['wav', 'mp3'] }]),
    ).toEqual(['mp3', 'wav']);
    // Nothing in common: the first restricted list, as with one deployment.
    expect(commonAcceptedFormats([{ acceptedFormats: ['flac'] }, { acceptedFormats: ['wav'] }])).toEqual(['flac']);
    const model = (acceptedFormats?: AudioContainer[]) =>
      ({ provider: 'p', modelId: 'm', ...(acceptedFormats && { acceptedFormats }) }) as TranscriptionModel;
    const deployed = deployedModel(
      'transcription',
      plan([target('a', model()), target('b', model(['wav']))]),
      runtime(),
    );
    expect(deployed.acceptedFormats).toEqual(['wav']);
  });
});

describe('strategies', () => {
  const items = [
    { id: 'a', weight: 1 },
    { id: 'b', weight: 1 },
    { id: 'c', weight: 1 },
  ];
  it('least-busy puts the fewest calls in flight first; lowest-latency the fastest, unmeasured first', () => {
    const stats = createDeploymentStats();
    stats.started('a');
    stats.started('a');
    stats.started('b');
    expect(orderDeployments(items, 'least-busy', stats.get, () => 0).map((item) => item.id)).toEqual(['c', 'b', 'a']);
    stats.answered('a', 50);
    stats.answered('b', 10);
    expect(orderDeployments(items, 'lowest-latency', stats.get, () => 0).map((item) => item.id)).toEqual([
      'c',
      'b',
      'a',
    ]);
  });

  it('weighted draws by weight without replacement', () => {
    const counts = { a: 0, b: 0 };
    let seed = 1;
    const random = () => {
      seed = (seed * 16807) % 2147483647;
      return seed / 2147483647;
    };
    for (let draw = 0; draw < 4000; draw += 1) {
      const order = orderDeployments(
        [
          { id: 'a', weight: 3 },
          { id: 'b', weight: 1 },
        ],
        'weighted',
        () => ({ inFlight: 0, latencyMs: 0 }),
        random,
      );
      expect(order).toHaveLength(2);
      counts[order[0]!.id as 'a' | 'b'] += 1;
    }
    expect(counts.a / 4000).toBeGreaterThan(0.7);
    expect(counts.a / 4000).toBeLessThan(0.8);
  });
});
