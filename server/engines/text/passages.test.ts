import { describe, expect, it } from 'vitest';
import { splitIntoPassages } from './passages.js';

describe('splitIntoPassages', () => {
  it('packs short paragraphs together up to the target', () => {
    const paragraphs = Array.from({ length: 30 }, (_, index) => `Paragraph ${index} says something short and true.`);
    const passages = splitIntoPassages(paragraphs.join('\n\n'), { targetChars: 200, maxChars: 300 });
    expect(passages.length).toBeGreaterThan(4);
    for (const passage of passages) {
      expect(passage.length).toBeLessThanOrEqual(200);
    }
    expect(passages.join('\n')).toBe(paragraphs.join('\n'));
  });

  it('cuts a long paragraph at sentence ends, and a sentence without ends at a space, never past the maximum', () => {
    const sentences = Array.from({ length: 40 }, (_, index) => `Sentence number ${index} is here.`).join(' ');
    const run = 'word '.repeat(1_000);
    const passages = splitIntoPassages(`${sentences}\n\n${run}`, { targetChars: 300, maxChars: 450 });
    for (const passage of passages) {
      expect(passage.length).toBeLessThanOrEqual(450);
    }
    // Sentence passages end at a sentence end.
    expect(passages[0]).toMatch(/here\.$/);
    expect(
      passages
        .join(' ')
        .split(/\s+/)
        .filter((word) => word === 'word'),
    ).toHaveLength(1_000);
  });

  it('gives nothing for blank text', () => {
    expect(splitIntoPassages('  \n\n \t ')).toEqual([]);
  });
});
