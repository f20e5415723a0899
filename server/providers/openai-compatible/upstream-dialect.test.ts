import { describe, expect, it } from 'vitest';
import { upstreamDialect } from './upstream-dialect.js';

describe('upstreamDialect', () => {
  it.each([
    ['https://api.openai.com/v1', { maxTokensField: 'max_completion_tokens', topK: false }],
    [
      'https://my-resource.openai.azure.com/openai/deployments/d?api-version=2024-10-21',
      { maxTokensField: 'max_completion_tokens', topK: false },
    ],
    ['http://127.0.0.1:11434/v1', { maxTokensField: 'max_tokens', topK: true }],
    ['http://vllm.internal:8000/v1', { maxTokensField: 'max_tokens', topK: true }],
    ['https://openrouter.ai/api/v1', { maxTokensField: 'max_tokens', topK: true }],
  ])('chooses the request fields for %s', (baseUrl, want) => {
    expect(upstreamDialect(baseUrl)).toEqual(want);
  });
});
