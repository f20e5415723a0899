/** The estimate a call reserves before it runs: what it counts, per dialect, and what it ignores. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_OUTPUT_ESTIMATE, estimateCall, estimatedMediaUnits } from './estimate.js';

describe('estimateCall', () => {
  it("chat in every dialect: input from the body's size, output from its cap or the default", () => {
    expect(estimateCall('createChatCompletion', { model: 'm', max_tokens: 100 }, 401)).toEqual({
      type: 'chat',
      model: 'm',
      inputTokens: 101,
      outputTokens: 100,
      images: 0,
      characters: 0,
      seconds: 0,
    });
    expect(estimateCall('createChatCompletion', { max_completion_tokens: '50' }, 4).outputTokens).toBe(50);
    expect(estimateCall('createResponse', { max_output_tokens: 16 }, 4).outputTokens).toBe(16);
    expect(estimateCall('createMessage', { max_tokens: 7 }, 4).outputTokens).toBe(7);
    expect(estimateCall('createSearchAnswer', {}, 4).outputTokens).toBe(DEFAULT_OUTPUT_ESTIMATE);
    expect(estimateCall('mcpPost:chat', {}, 4).type).toBe('chat');
  });

  it('ignores caps that are negative, not finite or not numbers, and bounds huge ones', () => {
    expect(estimateCall('createChatCompletion', { max_tokens: -5, max_completion_tokens: 9 }, 4).outputTokens).toBe(9);
    expect(estimateCall('createChatCompletion', { max_tokens: 'many' }, 4).outputTokens).toBe(DEFAULT_OUTPUT_ESTIMATE);
    expect(estimateCall('createChatCompletion', { max_tokens: Number.POSITIVE_INFINITY }, 4).outputTokens).toBe(
      DEFAULT_OUTPUT_ESTIMATE,
    );
    expect(estimateCall('createChatCompletion', { max_tokens: 1e12 }, 4).outputTokens).toBe(1_000_000);
    expect(estimateCall('createChatCompletion', null, 0).model).toBeUndefined();
  });

  it('media and tools', () => {
    expect(estimatedMediaUnits(estimateCall('createImage', { n: 3 }, 10))).toBe(3);
    expect(estimatedMediaUnits(estimateCall('createSpeech', { input: 'hello' }, 10))).toBe(5);
    expect(estimateCall('createTranscription', {}, 16_000).seconds).toBe(2);
    expect(estimateCall('mcpPost:describe_image', {}, 40).inputTokens).toBe(10);
    expect(estimateCall('mcpPost:web_search', {}, 40).inputTokens).toBe(0);
    expect(estimateCall('listModels', {}, 40)).toMatchObject({ inputTokens: 0, outputTokens: 0 });
  });
});
