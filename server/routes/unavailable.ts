/**
 * Operations whose capability this build does not serve yet. The contract describes them completely; until
 * their engines land they answer 503 `capability_unavailable` (with `x-should-retry: false`) in the family's
 * envelope, naming the capability, rather than pretending to work. Which operations these are is checked by
 * the compiler in `index.ts`: exactly those without a real handler.
 */
import { ApiError } from '../core/api-error.js';
import type { Handlers, OperationId } from '../http/operation-types.js';

export function unavailableHandlers<O extends OperationId>(capabilities: Record<O, string>): Pick<Handlers, O> {
  const entries = Object.entries(capabilities).map(([operationId, capability]) => [
    operationId,
    () => {
      throw new ApiError(503, `This Omnigate build does not serve ${capability as string} yet.`, {
        code: 'capability_unavailable',
        retryable: false,
        expected: true,
      });
    },
  ]);
  return Object.fromEntries(entries) as Pick<Handlers, O>;
}
