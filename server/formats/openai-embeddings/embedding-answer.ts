/**
 * OpenAI's embeddings answer: our answer from canonical vectors, and an upstream's answer into them (`data`
 * by `index`, each vector an array of numbers or base64 float32 bytes), for the OpenAI-compatible provider.
 */
import type { components } from '../../../generated/api.js';
import { base64ToFloat32, float32ToBase64 } from './float32-base64.js';

export type EmbeddingList = components['schemas']['EmbeddingList'];

export function encodeEmbeddingList(input: {
  embeddings: number[][];
  encodingFormat: 'float' | 'base64';
  model: string;
  inputTokens: number;
}): EmbeddingList {
  return {
    object: 'list',
    data: input.embeddings.map((vector, index) => ({
      object: 'embedding',
      index,
      embedding: input.encodingFormat === 'base64' ? float32ToBase64(vector) : vector,
    })),
    model: input.model,
    usage: { prompt_tokens: input.inputTokens, total_tokens: input.inputTokens },
  };
}

/** An upstream's answer, or a message saying what was wrong with it. */
export function decodeUpstreamEmbeddings(
  body: unknown,
  expected: number,
): { embeddings: number[][]; promptTokens?: number } | { error: string } {
  const data = (body as { data?: unknown })?.data;
  if (!Array.isArray(data) || data.length !== expected) {
    return { error: `expected ${expected} embeddings in data, got ${Array.isArray(data) ? data.length : 'none'}` };
  }
  const embeddings: number[][] = new Array(expected);
  for (const [position, item] of data.entries()) {
    const { index = position, embedding } = (item ?? {}) as { index?: unknown; embedding?: unknown };
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= expected || embeddings[index]) {
      return { error: `data[${position}].index is not a distinct input position` };
    }
    const vector =
      typeof embedding === 'string'
        ? base64ToFloat32(embedding)
        : Array.isArray(embedding) && embedding.every((value) => typeof value === 'number')
          ? (embedding as number[])
          : undefined;
    if (!vector) {
      return { error: `data[${position}].embedding is neither numbers nor base64 float32` };
    }
    embeddings[index] = vector;
  }
  const usage = (body as { usage?: { prompt_tokens?: unknown } }).usage;
  const promptTokens = typeof usage?.prompt_tokens === 'number' ? usage.prompt_tokens : undefined;
  return promptTokens === undefined ? { embeddings } : { embeddings, promptTokens };
}
