import type { AppDeps } from '../app.js';
import { ApiError } from '../http/api-error.js';
import type { Handlers } from '../http/operation-types.js';

export function messageHandlers(_deps: AppDeps): Pick<Handlers, 'createMessage' | 'countMessageTokens'> {
  const pending = () => {
    throw new ApiError(503, 'not wired yet');
  };
  return { createMessage: pending, countMessageTokens: pending };
}
