/**
 * `POST /v1/web/search` and `POST /v1/search/answer` (see calls/search/run-search.ts and calls/search/search-answer.ts).
 * `invokeWebSearchTool` is left to the tools routes: it is the same `runSearch` with its results rendered as
 * text, and belongs beside the MCP tool that shares that rendering.
 */
import type { AppDeps } from './app-deps.js';
import { scopeOf } from '../http/call-scope.js';
import type { OperationHandler, ResponseBody } from '../http/operation-types.js';
import { randomId } from '../core/random-id.js';
import { runSearch } from '../calls/search/run-search.js';
import { encodeSearchResult } from '../formats/search/search-result.js';
import { sendSearchAnswer } from '../calls/search/search-answer.js';

export function searchHandlers(deps: Pick<AppDeps, 'registry' | 'logger' | 'shutdownSignal' | 'media' | 'search'>): {
  webSearch: OperationHandler<'webSearch'>;
  createSearchAnswer: OperationHandler<'createSearchAnswer'>;
} {
  const searchDeps = {
    ...deps,
    defaultSearchModel: deps.search?.defaultSearchModel,
    defaultAnswerModel: deps.search?.defaultAnswerModel,
  };
  return {
    async webSearch(req, res) {
      const { provider, results, filesIndexing } = await runSearch(searchDeps, scopeOf(res), req.body);
      const body = {
        object: 'web_search.result' as const,
        id: randomId('ws'),
        query: req.body.query,
        results: results.map(encodeSearchResult),
        provider,
        ...(filesIndexing && { files_indexing: filesIndexing }),
      } satisfies ResponseBody<'webSearch', 200>;
      res.json(body);
    },
    async createSearchAnswer(req, res) {
      await sendSearchAnswer(searchDeps, scopeOf(res), res, req.body);
    },
  };
}
