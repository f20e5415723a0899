import { describe, expect, it } from 'vitest';
import { ApiError } from '../../core/api-error.js';
import { decodeEmbeddingRequest, MAX_EMBEDDING_INPUTS } from './embedding-request.js';
import { decodeUpstreamEmbeddings } from './embedding-answer.js';
import { base64ToFloat32, float32ToBase64 } from './float32-base64.js';

const paramOf = (body: object) => {
  try {
    decodeEmbeddingRequest({ model: 'm', ...body } as never);
  } catch (error) {
    return error instanceof ApiError ? error.param : 'not an ApiError';
  }
  return 'accepted';
};

describe('decodeEmbeddingRequest', () => {
  it('keeps the input shape, the encoding and unknown fields', () => {
    expect(decodeEmbeddingRequest({ model: 'm', input: 'a', input_type: 'query' } as never)).toEqual({
      inputs: ['a'],
      single: true,
      dimensions: undefined,
      encodingFormat: 'float',
      extra: { input_type: 'query' },
    });
    expect(decodeEmbeddingRequest({ model: 'm', input: [1, 2], encoding_format: 'base64' })).toMatchObject({
      inputs: [[1, 2]],
      single: true,
      encodingFormat: 'base64',
    });
    expect(decodeEmbeddingRequest({ model: 'm', input: [[1], [2]] })).toMatchObject({
      inputs: [[1], [2]],
      single: false,
    });
  });

  it('refuses empty input, empty items and too many, naming the input', () => {
    expect(paramOf({ input: '' })).toBe('input');
    expect(paramOf({ input: [] })).toBe('input');
    expect(paramOf({ input: ['a', ''] })).toBe('input.1');
    expect(paramOf({ input: [[1], []] })).toBe('input.1');
    expect(paramOf({ input: [1.5] })).toBe('input');
    expect(paramOf({ input: Array.from({ length: MAX_EMBEDDING_INPUTS + 1 }, () => 'x') })).toBe('input');
    expect(paramOf({ input: Array.from({ length: MAX_EMBEDDING_INPUTS }, () => 'x') })).toBe('accepted');
  });
});

describe('float32 base64', () => {
  it('round-trips float32 values exactly, little-endian', () => {
    const vector = [0.1, -2.5, 3.4028234663852886e38].map(Math.fround);
    const text = float32ToBase64(vector);
    expect(Buffer.from(text, 'base64').readFloatLE(4)).toBe(-2.5);
    expect(base64ToFloat32(text)).toEqual(vector);
    expect(base64ToFloat32('AAA=')).toBeUndefined();
    expect(base64ToFloat32('not base64!')).toBeUndefined();
  });
});

describe('decodeUpstreamEmbeddings', () => {
  it('orders by index and refuses a wrong count or a repeated index', () => {
    expect(
      decodeUpstreamEmbeddings(
        {
          data: [
            { index: 1, embedding: [2] },
            { index: 0, embedding: float32ToBase64([1]) },
          ],
          usage: { prompt_tokens: 3 },
        },
        2,
      ),
    ).toEqual({ embeddings: [[1], [2]], promptTokens: 3 });
    expect(decodeUpstreamEmbeddings({ data: [{ index: 0, embedding: [1] }] }, 2)).toHaveProperty('error');
    expect(
      decodeUpstreamEmbeddings(
        {
          data: [
            { index: 0, embedding: [1] },
            { index: 0, embedding: [2] },
          ],
        },
        2,
      ),
    ).toHaveProperty('error');
  });
});
