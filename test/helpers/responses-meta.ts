/**
 * Deterministic `ResponseMeta` for this codec's tests: fixed clock, counting id generator, default echo.
 */
import type { ResponseMeta } from '../../server/formats/openai-responses/response-object.js';

export function testMeta(overrides: Partial<ResponseMeta> = {}): ResponseMeta {
  let counter = 0;
  return {
    id: 'resp_test1',
    model: 'test-model',
    createdAt: 1_760_000_000,
    now: () => 1_760_000_003,
    generateId: (prefix) => `${prefix}_${++counter}`,
    instructions: null,
    metadata: {},
    previousResponseId: null,
    store: true,
    temperature: null,
    topP: null,
    maxOutputTokens: null,
    text: { format: { type: 'text' } },
    toolChoice: 'auto',
    tools: [],
    toolNamespaces: new Map(),
    parallelToolCalls: true,
    reasoning: { effort: null, summary: null },
    ...overrides,
  };
}
