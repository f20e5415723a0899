import { describe, expect, it } from 'vitest';
import { cosineSimilarity, lexicalEmbed } from './lexical-embed.js';

const norm = (vector: number[]) => Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
const embed = (texts: Array<string | number[]>, dimensions = 256) => lexicalEmbed({ inputs: texts, dimensions });

describe('the lexical reference embedder', () => {
  it('is deterministic and makes unit vectors of the asked length', () => {
    const texts = ['The quick brown fox', 'jumps over the lazy dog', '!!!', [5, 6, 7]];
    const [first, again] = [embed(texts, 64), embed(texts, 64)];
    expect(again).toEqual(first);
    for (const vector of first) {
      expect(vector).toHaveLength(64);
      expect(norm(vector)).toBeCloseTo(1, 5);
    }
  });

  it('holds float32 values, so a base64 answer carries the same numbers', () => {
    for (const value of embed(['float thirty two'])[0]!) {
      expect(Math.fround(value)).toBe(value);
    }
  });

  it('puts texts sharing words (and inflections of them) closer than unrelated texts', () => {
    const [query, related, inflected, unrelated] = embed([
      'reset the router password',
      'how to reset a router password',
      'resetting routers and passwords',
      'bake bread with sourdough starter',
    ]);
    const similarity = (other: number[]) => cosineSimilarity(query!, other);
    expect(similarity(related!)).toBeGreaterThan(similarity(unrelated!) + 0.3);
    expect(similarity(inflected!)).toBeGreaterThan(similarity(unrelated!) + 0.1);
  });

  it('is lexical, not semantic: synonyms that share no letters are not close', () => {
    const [car, automobile] = embed(['car', 'automobile']);
    expect(Math.abs(cosineSimilarity(car!, automobile!))).toBeLessThan(0.3);
  });

  it('ignores case and Unicode compatibility forms', () => {
    expect(embed(['ＨＥＬＬＯ World'])).toEqual(embed(['hello world']));
  });

  it('cosine similarity of a vector with itself is 1, with a zero vector 0', () => {
    const [vector] = embed(['anything']);
    expect(cosineSimilarity(vector!, vector!)).toBeCloseTo(1, 6);
    expect(cosineSimilarity(vector!, new Array(256).fill(0))).toBe(0);
  });
});
