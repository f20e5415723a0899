/**
 * The rerank request of Cohere and Jina (`POST /v1/rerank`) into `RerankCallOptions`: documents as texts or
 * `{ text }` objects, `top_n`, and the fields this API does not define, kept for upstreams.
 */
import { ApiError } from '../../core/api-error.js';
import type { RerankCallOptions } from '../../core/models.js';
import type { components } from '../../../generated/api.js';

export type RerankRequestBody = components['schemas']['RerankRequest'];

export const MAX_RERANK_DOCUMENTS = 1000;

const KNOWN = new Set(['model', 'query', 'documents', 'top_n', 'return_documents']);

export function decodeRerankRequest(body: RerankRequestBody): RerankCallOptions {
  if (typeof body.query !== 'string' || body.query.length === 0) {
    throw new ApiError(400, 'query is empty: give the text to rank the documents against.', {
      code: 'invalid_input',
      param: 'query',
    });
  }
  if (!Array.isArray(body.documents) || body.documents.length === 0) {
    throw new ApiError(400, 'documents is empty: give at least one document to rank.', {
      code: 'invalid_input',
      param: 'documents',
    });
  }
  if (body.documents.length > MAX_RERANK_DOCUMENTS) {
    throw new ApiError(
      400,
      `documents has ${body.documents.length} items; at most ${MAX_RERANK_DOCUMENTS} are ranked.`,
      {
        code: 'invalid_input',
        param: 'documents',
      },
    );
  }
  const documents = body.documents.map((document, index) => {
    const text = typeof document === 'string' ? document : document?.text;
    if (typeof text !== 'string' || text.length === 0) {
      throw new ApiError(400, `documents.${index} is empty: every document needs a text.`, {
        code: 'invalid_input',
        param: `documents.${index}`,
      });
    }
    return text;
  });
  return {
    query: body.query,
    documents,
    ...(body.top_n !== undefined ? { topN: body.top_n } : {}),
    extra: Object.fromEntries(Object.entries(body).filter(([name]) => !KNOWN.has(name))),
  };
}
