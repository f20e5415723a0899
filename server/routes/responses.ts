import type { AppDeps } from '../app.js';
import { ApiError } from '../http/api-error.js';
import type { Handlers } from '../http/operation-types.js';

export function responseHandlers(_deps: AppDeps): Pick<Handlers, 'createResponse' | 'getResponse' | 'deleteResponse'> {
  const pending = () => {
    throw new ApiError(503, 'not wired yet');
  };
  return { createResponse: pending, getResponse: pending, deleteResponse: pending };
}
