/**
 * All operation handlers, keyed by operationId. `Handlers` makes a missing operation a compile error, and
 * `UNSERVED` must name exactly the operations without a real handler: serving one without removing it from
 * `UNSERVED`, or removing it without serving it, does not compile.
 */
import type { Handlers, OperationId } from '../http/operation-types.js';
import type { AppDeps } from './app-deps.js';
import { adminHandlers } from './admin.js';
import { chatCompletionHandlers } from './chat-completions.js';
import { extensionHandlers } from './extensions.js';
import { observabilityHandlers } from './observability.js';
import { imageHandlers } from './images.js';
import { mediaHandlers } from './media.js';
import { musicHandlers } from './music.js';
import { speechHandlers } from './speech.js';
import { embeddingHandlers } from './embeddings.js';
import { transcriptionHandlers } from './audio-transcriptions.js';
import { videoHandlers } from './videos.js';
import { fileHandlers } from './files.js';
import { mcpHandlers } from './mcp.js';
import { toolHandlers } from './tools.js';
import { messageHandlers } from './messages.js';
import { modelHandlers } from './models.js';
import { responseHandlers } from './responses.js';
import { searchHandlers } from './search.js';
import { unavailableHandlers } from './unavailable.js';

function servedHandlers(deps: AppDeps) {
  return {
    ...modelHandlers(deps),
    ...adminHandlers(deps),
    ...extensionHandlers(deps),
    ...observabilityHandlers(deps),
    ...chatCompletionHandlers(deps),
    ...responseHandlers(deps),
    ...messageHandlers(deps),
    ...mcpHandlers(deps),
    ...toolHandlers(deps),
    ...imageHandlers(deps),
    ...speechHandlers(deps),
    ...transcriptionHandlers(deps),
    ...musicHandlers(deps),
    ...mediaHandlers(deps),
    ...videoHandlers(deps),
    ...fileHandlers(deps),
    ...searchHandlers(deps),
    ...embeddingHandlers(deps),
  };
}

type UnservedOperation = Exclude<OperationId, keyof ReturnType<typeof servedHandlers>>;

/**
 * The capability each unserved operation belongs to, as its 503 names it. Every operation is served now; the
 * check stays, so an operation added to the contract without a handler names its capability here or fails.
 */
const UNSERVED = {} satisfies Record<UnservedOperation, string>;

export function createHandlers(deps: AppDeps): Handlers {
  return { ...servedHandlers(deps), ...unavailableHandlers(UNSERVED) };
}
