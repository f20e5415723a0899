/**
 * One rerank as `POST /v1/rerank` runs it. A model of type `rerank` ranks the documents itself (an upstream's
 * `/rerank`); a model of type `embedding` ranks them here, by the cosine similarity of each document's vector to
 * the query's (one embeddings call for the query and all documents), which is how the built-in `local:embed`
 * reranks — lexically, as it embeds.
 */
import { ApiError } from '../../core/api-error.js';
import type { CallScope } from '../../http/call-scope.js';
import type { RerankCallOptions, RerankResult } from '../../core/models.js';
import { cosineSimilarity } from '../../engines/embed/lexical-embed.js';
import { decodeRerankRequest, type RerankRequestBody } from '../../formats/rerank/rerank-request.js';
import { prepareCall, type CallDeps } from '../prepare-call.js';

/** Whether `model` names a rerank model, else an embedding model; the registry's own error when neither. */
function rankerType(deps: CallDeps, scope: CallScope, model: string): 'rerank' | 'embedding' {
  try {
    deps.registry.resolve(model, 'rerank', scope.key);
    return 'rerank';
  } catch (error) {
    if (error instanceof ApiError && error.code === 'wrong_model_type') {
      try {
        deps.registry.resolve(model, 'embedding', scope.key);
        return 'embedding';
      } catch {
        throw new ApiError(400, `${error.message.replace(/\.$/, '')} or embedding.`, {
          code: 'wrong_model_type',
          param: 'model',
        });
      }
    }
    throw error;
  }
}

/** The ranking of `documents` by an embedding model's vectors. */
export function rankByCosine(vectors: number[][], topN: number | undefined): RerankResult['results'] {
  const [query, ...documents] = vectors;
  const ranked = documents
    .map((vector, index) => ({ index, score: cosineSimilarity(query ?? [], vector) }))
    .sort((a, b) => b.score - a.score || a.index - b.index);
  return topN !== undefined ? ranked.slice(0, topN) : ranked;
}

export async function rerankDocuments(
  deps: CallDeps,
  scope: CallScope,
  body: RerankRequestBody,
): Promise<{ result: RerankResult; model: string; options: RerankCallOptions }> {
  const options = decodeRerankRequest(body);
  if (rankerType(deps, scope, body.model) === 'rerank') {
    const call = prepareCall(deps, scope, body.model, 'rerank');
    const result = await call.model.rerank(options, call.context);
    call.call.usage = { inputTokens: result.usage.inputTokens, outputTokens: 0 };
    return { result, model: call.resolved.entry.id, options };
  }
  const call = prepareCall(deps, scope, body.model, 'embedding');
  for (const field of Object.keys(options.extra)) {
    call.context.warn({ field, reason: 'an embedding model ranks by cosine similarity and takes no such setting' });
  }
  const embedded = await call.model.embed(
    { inputs: [options.query, ...options.documents], single: false, encodingFormat: 'float', extra: {} },
    call.context,
  );
  call.call.usage = { inputTokens: embedded.usage.inputTokens, outputTokens: 0 };
  const result = { results: rankByCosine(embedded.embeddings, options.topN), usage: embedded.usage };
  return { result, model: call.resolved.entry.id, options };
}
