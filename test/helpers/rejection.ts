/** The `ApiError` a promise rejects with; fails the test when it resolves or rejects with something else. */
import { expect } from 'vitest';
import { ApiError } from '../../server/core/api-error.js';

export async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}
