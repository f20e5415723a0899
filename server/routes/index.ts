/** All operation handlers, keyed by operationId; `Handlers` makes a missing operation a compile error. */
import type { AppDeps } from '../app.js';
import type { Handlers } from '../http/operation-types.js';
import { chatCompletionHandlers } from './chat-completions.js';
import { extensionHandlers } from './extensions.js';
import { messageHandlers } from './messages.js';
import { modelHandlers } from './models.js';
import { responseHandlers } from './responses.js';
import { unavailableHandlers } from './unavailable.js';

export function createHandlers(deps: AppDeps): Handlers {
  return {
    ...modelHandlers(deps),
    ...extensionHandlers(deps),
    ...chatCompletionHandlers(deps),
    ...responseHandlers(deps),
    ...messageHandlers(deps),
    ...unavailableHandlers(),
  };
}
