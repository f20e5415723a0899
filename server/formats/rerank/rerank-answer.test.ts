import { describe, expect, it } from 'vitest';
import { decodeUpstreamRerank, encodeRerankResponse } from './rerank-answer.js';
import { decodeRerankRequest } from './rerank-request.js';

describe('rerank codec', () => {
  it("reads Jina's and Cohere's token counts, and orders the results best first", () => {
    expect(
      decodeUpstreamRerank(
        {
          results: [
            { index: 0, relevance_score: 0.2 },
            { index: 1, relevance_score: 0.7 },
          ],
          usage: { total_tokens: 9 },
        },
        2,
      ),
    ).toEqual({
      results: [
        { index: 1, score: 0.7 },
        { index: 0, score: 0.2 },
      ],
      tokens: 9,
    });
    expect(
      decodeUpstreamRerank(
        { results: [{ index: 0, relevance_score: 1 }], meta: { billed_units: { input_tokens: 4 } } },
        1,
      ),
    ).toMatchObject({ tokens: 4 });
  });

  it('refuses an index out of range, a repeated index and a missing score', () => {
    expect(decodeUpstreamRerank({ results: [{ index: 3, relevance_score: 1 }] }, 2)).toHaveProperty('error');
    expect(
      decodeUpstreamRerank(
        {
          results: [
            { index: 0, relevance_score: 1 },
            { index: 0, relevance_score: 0.5 },
          ],
        },
        2,
      ),
    ).toHaveProperty('error');
    expect(decodeUpstreamRerank({ results: [{ index: 0 }] }, 2)).toHaveProperty('error');
    expect(decodeUpstreamRerank({}, 2)).toHaveProperty('error');
  });

  it('takes documents as texts or objects, keeps unknown fields, and answers documents when asked', () => {
    const options = decodeRerankRequest({
      model: 'm',
      query: 'q',
      documents: ['a', { text: 'b' }],
      top_n: 1,
      max_chunks_per_doc: 2,
    } as never);
    expect(options).toEqual({ query: 'q', documents: ['a', 'b'], topN: 1, extra: { max_chunks_per_doc: 2 } });
    expect(
      encodeRerankResponse({
        id: 'rerank-1',
        model: 'm',
        result: { results: [{ index: 1, score: 0.5 }], usage: { inputTokens: 3 } },
        documents: options.documents,
        returnDocuments: true,
      }),
    ).toEqual({
      id: 'rerank-1',
      model: 'm',
      results: [{ index: 1, relevance_score: 0.5, document: { text: 'b' } }],
      usage: { prompt_tokens: 3, total_tokens: 3 },
    });
  });
});
