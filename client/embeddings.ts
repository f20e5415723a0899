/**
 * Embeddings and rerank: the typed JSON answers of `POST /v1/embeddings` and `POST /v1/rerank`, or a thrown
 * `OmnigateError`. `embeddingVectors` turns either encoding into arrays of numbers (base64 is little-endian
 * float32, decoded with a DataView so the machine's byte order does not matter).
 */
import type { CallOptions, RawClient } from './raw-client.js';
import type { EmbeddingList, EmbeddingRequest, RerankRequest, RerankResponse } from './types.js';
import { unwrap } from './unwrap.js';

export async function createEmbeddings(
  raw: RawClient,
  body: EmbeddingRequest,
  options: CallOptions = {},
): Promise<EmbeddingList> {
  return unwrap(await raw.POST('/v1/embeddings', { body, signal: options.signal })) as EmbeddingList;
}

export async function rerank(raw: RawClient, body: RerankRequest, options: CallOptions = {}): Promise<RerankResponse> {
  return unwrap(await raw.POST('/v1/rerank', { body, signal: options.signal })) as RerankResponse;
}

/** The vectors of an embeddings answer in input order, as numbers whichever `encoding_format` was asked. */
export function embeddingVectors(list: EmbeddingList): number[][] {
  return [...list.data]
    .sort((a, b) => a.index - b.index)
    .map(({ embedding }) => {
      if (typeof embedding !== 'string') {
        return embedding;
      }
      const binary = atob(embedding);
      const view = new DataView(new ArrayBuffer(binary.length));
      for (let index = 0; index < binary.length; index++) {
        view.setUint8(index, binary.charCodeAt(index));
      }
      return Array.from({ length: binary.length / 4 }, (_, index) => view.getFloat32(index * 4, true));
    });
}
