/**
 * Assertions every contract test makes: the request-id headers of a response, and the error envelopes of
 * the three API families, with exact values.
 */
import request from 'supertest';
import { expect } from 'vitest';
import { assertMatchesSchema } from './spec-schemas.js';

interface HeaderBag {
  headers: Record<string, string | string[] | undefined>;
}

const REQUEST_ID = /^req_[0-9a-f]{32}$/;

/**
 * Checks `x-svc-request-id` is present and well-formed, `x-request-id` carries the same value, and
 * `request-id` does too under `/anthropic` (and is absent elsewhere). Returns the id.
 */
export function expectRequestId(res: HeaderBag, family: 'openai' | 'anthropic' | 'mcp' = 'openai'): string {
  const id = res.headers['x-svc-request-id'];
  expect(typeof id).toBe('string');
  expect(id).toMatch(REQUEST_ID);
  expect(res.headers['x-request-id']).toBe(id);
  if (family === 'anthropic') {
    expect(res.headers['request-id']).toBe(id);
  } else {
    expect(res.headers['request-id']).toBeUndefined();
  }
  return id as string;
}

/** The OpenAI envelope `{error: {message, type, param, code}}`, validated against the spec and compared exactly. */
export function expectOpenAIError(
  body: unknown,
  expected: { message: string | RegExp; type: string; param: string | null; code: string | null },
): void {
  assertMatchesSchema('ErrorResponse', body);
  const error = (body as { error: { message: string; type: string; param: string | null; code: string | null } }).error;
  expect(Object.keys(body as object)).toEqual(['error']);
  if (expected.message instanceof RegExp) {
    expect(error.message).toMatch(expected.message);
  } else {
    expect(error.message).toBe(expected.message);
  }
  expect({ type: error.type, param: error.param, code: error.code }).toEqual({
    type: expected.type,
    param: expected.param,
    code: expected.code,
  });
}

/** The Anthropic envelope `{type: "error", error: {type, message}, request_id}`. */
export function expectAnthropicError(
  body: unknown,
  expected: { type: string; message: string | RegExp; requestId: string },
): void {
  assertMatchesSchema('AnthropicErrorResponse', body);
  const typed = body as { type: string; error: { type: string; message: string }; request_id: string | null };
  expect(typed.type).toBe('error');
  expect(typed.error.type).toBe(expected.type);
  if (expected.message instanceof RegExp) {
    expect(typed.error.message).toMatch(expected.message);
  } else {
    expect(typed.error.message).toBe(expected.message);
  }
  expect(typed.request_id).toBe(expected.requestId);
}

/**
 * The usage records of one request id, read through `GET /v1/usage` with `key`. A record is written when
 * its response closes, which can be a moment after the client has read the last byte, so this polls
 * (up to `timeoutMs`) until the record is there.
 */
export async function usageOf(
  app: Parameters<typeof request>[0],
  key: string,
  requestId: string,
  timeoutMs = 3000,
): Promise<Array<Record<string, unknown>>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await request(app)
      .get('/v1/usage')
      .query({ request_id: requestId })
      .set('authorization', `Bearer ${key}`);
    expect(res.status).toBe(200);
    if (res.body.data.length > 0 || Date.now() > deadline) {
      return res.body.data as Array<Record<string, unknown>>;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
