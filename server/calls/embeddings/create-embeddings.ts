/**
 * One embeddings call as `POST /v1/embeddings` runs it, shared by that route and the `embed` tool: decode,
 * resolve the embedding model for the key, embed, record the input tokens as the call's usage (the limits
 * settle its token estimate with them).
 */
import type { CallScope } from '../../http/call-scope.js';
import {
  decodeEmbeddingRequest,
  type EmbeddingRequestBody,
} from '../../formats/openai-embeddings/embedding-request.js';
import { prepareCall, type CallDeps } from '../prepare-call.js';

export async function createEmbeddings(
  deps: CallDeps,
  scope: CallScope,
  body: EmbeddingRequestBody,
): Promise<{ embeddings: number[][]; model: string; inputTokens: number; encodingFormat: 'float' | 'base64' }> {
  const options = decodeEmbeddingRequest(body);
  const call = prepareCall(deps, scope, body.model, 'embedding');
  const { embeddings, usage } = await call.model.embed(options, call.context);
  call.call.usage = { inputTokens: usage.inputTokens, outputTokens: 0 };
  return {
    embeddings,
    model: call.resolved.entry.id,
    inputTokens: usage.inputTokens,
    encodingFormat: options.encodingFormat,
  };
}
