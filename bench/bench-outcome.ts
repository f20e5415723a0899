/** The ended chat call both observability benches feed to the hooks: a small non-streamed answer, just finished. */
import type { CallOutcome } from '../server/observability/hooks.js';

export function benchOutcome(model = 'fake:bench-model'): CallOutcome {
  const start = performance.now();
  return {
    operation: 'createChatCompletion',
    modelRequested: 'bench',
    model,
    provider: 'fake',
    usage: { inputTokens: 12, outputTokens: 30, cacheReadTokens: 0, reasoningTokens: 0 } as never,
    units: null,
    media: null,
    status: 200,
    startedAt: start - 1.2,
    headAt: start - 0.4,
    errorCode: undefined,
    keyId: 'key_1',
    costUsd: 0.0001,
  };
}
