/**
 * The `EmbeddingModel` of an OpenAI-compatible upstream: `POST <base>/embeddings`
 * (https://platform.openai.com/docs/api-reference/embeddings). The request goes as the caller sent it — the same
 * input shape, `encoding_format`, `dimensions`, `user` and any field this API does not define — with `model` set
 * to the upstream's name; the vectors come back decoded exactly (base64 float32 or numbers), and `usage` is the
 * upstream's, counted here only when it sends none.
 */
import { UpstreamError } from '../../core/api-error.js';
import type { CallContext } from '../../core/call-context.js';
import type { EmbeddingCallOptions, EmbeddingModel, RerankCallOptions, RerankModel } from '../../core/models.js';
import { decodeUpstreamEmbeddings } from '../../formats/openai-embeddings/embedding-answer.js';
import { decodeUpstreamRerank } from '../../formats/rerank/rerank-answer.js';
import { countTextTokens } from '../../tokens/tokenizer.js';
import type { UpstreamHttpClient } from '../upstream/http-client.js';
import type { OpenAICompatibleConfig } from './http-client.js';

interface ModelInput {
  config: OpenAICompatibleConfig;
  client: UpstreamHttpClient;
  modelId: string;
}

export function embeddingRequestBody(options: EmbeddingCallOptions, modelId: string): Record<string, unknown> {
  return {
    ...options.extra,
    model: modelId,
    input: options.single ? options.inputs[0] : options.inputs,
    encoding_format: options.encodingFormat,
    ...(options.dimensions !== undefined ? { dimensions: options.dimensions } : {}),
    ...(options.user !== undefined ? { user: options.user } : {}),
  };
}

async function countedTokens(texts: Array<string | number[]>): Promise<number> {
  const counts = await Promise.all(
    texts.map((text) => (typeof text === 'string' ? countTextTokens(text) : text.length)),
  );
  return counts.reduce((sum, count) => sum + count, 0);
}

export function createOpenAICompatibleEmbeddingModel({ config, client, modelId }: ModelInput): EmbeddingModel {
  const provider = config.id;
  return {
    provider,
    modelId,
    async embed(options: EmbeddingCallOptions, context: CallContext) {
      const answer = await client.postJson({
        path: '/embeddings',
        body: embeddingRequestBody(options, modelId),
        signal: context.signal,
      });
      const decoded = decodeUpstreamEmbeddings(answer, options.inputs.length);
      if ('error' in decoded) {
        throw new UpstreamError(provider, 502, 200, `Upstream ${provider} answered embeddings with ${decoded.error}`);
      }
      const inputTokens = decoded.promptTokens ?? (await countedTokens(options.inputs));
      return { embeddings: decoded.embeddings, usage: { inputTokens } };
    },
  };
}

/**
 * The `RerankModel` of an upstream that serves the Cohere/Jina rerank API at `POST <base>/rerank` (Jina, vLLM,
 * LiteLLM, Infinity, TEI's compatible servers, …): the request as the caller sent it, with the upstream's model
 * name and the documents as plain texts (the form every one of them takes).
 */
export function createOpenAICompatibleRerankModel({ config, client, modelId }: ModelInput): RerankModel {
  const provider = config.id;
  return {
    provider,
    modelId,
    async rerank(options: RerankCallOptions, context: CallContext) {
      const answer = await client.postJson({
        path: '/rerank',
        body: {
          ...options.extra,
          model: modelId,
          query: options.query,
          documents: options.documents,
          ...(options.topN !== undefined ? { top_n: options.topN } : {}),
          return_documents: false,
        },
        signal: context.signal,
      });
      const decoded = decodeUpstreamRerank(answer, options.documents.length);
      if ('error' in decoded) {
        throw new UpstreamError(provider, 502, 200, `Upstream ${provider} answered rerank with ${decoded.error}`);
      }
      const results = options.topN !== undefined ? decoded.results.slice(0, options.topN) : decoded.results;
      const inputTokens = decoded.tokens ?? (await countedTokens([options.query, ...options.documents]));
      return { results, usage: { inputTokens } };
    },
  };
}
