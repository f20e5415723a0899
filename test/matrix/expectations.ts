/**
 * What each caller dialect must see for a canonical answer: its own finish/stop name and its own usage object,
 * computed here from first principles (OpenAI totals include cached tokens; Anthropic reports cache reads and
 * writes beside `input_tokens`), not with the server's mapping functions, so a wrong mapping cannot agree with
 * itself.
 */
import { expect } from 'vitest';
import type { FinishReason } from '../../server/core/chat.js';
import type { CallerDialect } from './conversation.js';

type Json = Record<string, any>;

/** Usage in canonical terms; absent counters are ones the provider does not report. */
export interface ExpectedUsage {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
  reasoning?: number;
}

export function expectedFinish(dialect: CallerDialect, finish: FinishReason): string {
  switch (dialect) {
    case 'chat':
      return finish === 'tool-calls' ? 'tool_calls' : finish;
    case 'responses':
      return finish === 'length' ? 'incomplete:max_output_tokens' : 'completed';
    case 'anthropic':
      return finish === 'tool-calls' ? 'tool_use' : finish === 'length' ? 'max_tokens' : 'end_turn';
  }
}

/** Asserts `actual[key]` is `expected`, treating `null` and absent alike when `expected` is null. */
function field(actual: Json | null | undefined, key: string, expected: number | null, where: string): void {
  const value = actual?.[key] ?? null;
  expect(value, `${where}.${key}`).toBe(expected);
}

export function assertCallerUsage(dialect: CallerDialect, usage: Json | null, expected: ExpectedUsage): void {
  expect(usage, 'usage reached the caller').not.toBeNull();
  switch (dialect) {
    case 'chat':
      field(usage, 'prompt_tokens', expected.input, 'usage');
      field(usage, 'completion_tokens', expected.output, 'usage');
      field(usage, 'total_tokens', expected.input + expected.output, 'usage');
      if (expected.cacheRead !== undefined) {
        field(usage!.prompt_tokens_details, 'cached_tokens', expected.cacheRead, 'usage.prompt_tokens_details');
      } else {
        expect(usage!.prompt_tokens_details?.cached_tokens ?? 0).toBe(0);
      }
      expect(
        usage!.completion_tokens_details?.reasoning_tokens ?? 0,
        'usage.completion_tokens_details.reasoning_tokens',
      ).toBe(expected.reasoning ?? 0);
      break;
    case 'responses':
      field(usage, 'input_tokens', expected.input, 'usage');
      field(usage, 'output_tokens', expected.output, 'usage');
      field(usage, 'total_tokens', expected.input + expected.output, 'usage');
      field(usage!.input_tokens_details, 'cached_tokens', expected.cacheRead ?? 0, 'usage.input_tokens_details');
      field(usage!.output_tokens_details, 'reasoning_tokens', expected.reasoning ?? 0, 'usage.output_tokens_details');
      break;
    case 'anthropic':
      field(usage, 'input_tokens', expected.input - (expected.cacheRead ?? 0) - (expected.cacheWrite ?? 0), 'usage');
      field(usage, 'output_tokens', expected.output, 'usage');
      field(usage, 'cache_read_input_tokens', expected.cacheRead ?? null, 'usage');
      field(usage, 'cache_creation_input_tokens', expected.cacheWrite ?? null, 'usage');
      break;
  }
}

/** The usage record (`GET /v1/usage`) is always in canonical terms. */
export function assertUsageRecord(record: Json, expected: ExpectedUsage): void {
  expect(record).toMatchObject({
    input_tokens: expected.input,
    output_tokens: expected.output,
    cached_input_tokens: expected.cacheRead ?? 0,
    cache_write_tokens: expected.cacheWrite ?? 0,
    reasoning_tokens: expected.reasoning ?? 0,
    status: 200,
  });
}
