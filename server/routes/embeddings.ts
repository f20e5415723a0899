/** `POST /v1/embeddings` (OpenAI's shape) and `POST /v1/rerank` (Cohere's and Jina's shape). */
import type { AppDeps } from './app-deps.js';
import { scopeOf } from '../http/call-scope.js';
import type { OperationHandler } from '../http/operation-types.js';
import { createEmbeddings } from '../calls/embeddings/create-embeddings.js';
import { rerankDocuments } from '../calls/embeddings/rerank-documents.js';
import { encodeEmbeddingList } from '../formats/openai-embeddings/embedding-answer.js';
import { encodeRerankResponse } from '../formats/rerank/rerank-answer.js';
import { randomId } from '../core/random-id.js';

export function embeddingHandlers(deps: Pick<AppDeps, 'registry' | 'logger' | 'shutdownSignal'>): {
  createEmbedding: OperationHandler<'createEmbedding'>;
  createRerank: OperationHandler<'createRerank'>;
} {
  return {
    async createEmbedding(req, res) {
      res.json(encodeEmbeddingList(await createEmbeddings(deps, scopeOf(res), req.body)));
    },
    async createRerank(req, res) {
      const ranked = await rerankDocuments(deps, scopeOf(res), req.body);
      res.json(
        encodeRerankResponse({
          id: randomId('rerank', '-'),
          model: ranked.model,
          result: ranked.result,
          documents: ranked.options.documents,
          returnDocuments: req.body.return_documents === true,
        }),
      );
    },
  };
}
