/**
 * Operations whose capability this build does not serve yet (media, files, search, tools, MCP). The
 * contract describes them completely; until their engines land they answer 503 `capability_unavailable`
 * in the family's envelope, naming the capability, rather than pretending to work.
 */
import { ApiError } from '../core/api-error.js';
import type { Handlers } from '../http/operation-types.js';

const CAPABILITIES = {
  createImage: 'image generation',
  createVideo: 'video generation',
  listVideos: 'video generation',
  retrieveVideo: 'video generation',
  downloadVideoContent: 'video generation',
  createSpeech: 'speech synthesis',
  createMusic: 'music generation',
  listFiles: 'file storage',
  createFile: 'file storage',
  retrieveFile: 'file storage',
  deleteFile: 'file storage',
  downloadFile: 'file storage',
  webSearch: 'web search',
  createSearchAnswer: 'search answers',
  invokeWebSearchTool: 'the web_search tool',
  invokeImageUnderstandingTool: 'the image_understanding tool',
  mcpPost: 'the MCP endpoint',
} as const;

type UnavailableOperation = keyof typeof CAPABILITIES;

/**
 * The MCP endpoint is stateless by design (no sessions, no standalone stream), so GET and DELETE are
 * refused for good, as the contract says, whatever the state of POST.
 */
function postOnly(): never {
  throw new ApiError(405, 'Method not allowed: the MCP endpoint keeps no sessions; send JSON-RPC messages with POST.', {
    code: 'method_not_allowed',
    headers: { allow: 'POST' },
  });
}

export function unavailableHandlers(): Pick<Handlers, UnavailableOperation | 'mcpGet' | 'mcpDelete'> {
  const entries = Object.entries(CAPABILITIES).map(([operationId, capability]) => [
    operationId,
    () => {
      throw new ApiError(503, `This Omnigate build does not serve ${capability} yet.`, { code: 'capability_unavailable', retryable: false, expected: true });
    },
  ]);
  return { ...(Object.fromEntries(entries) as Pick<Handlers, UnavailableOperation>), mcpGet: postOnly, mcpDelete: postOnly };
}
