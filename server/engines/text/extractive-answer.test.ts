import { describe, expect, it } from 'vitest';
import { extractiveAnswer } from './extractive-answer.js';

describe('extractiveAnswer', () => {
  const sources = [
    { text: 'The museum opens at nine. Tickets cost five euros. The café closes at noon.' },
    { text: 'Guided tours of the museum start at ten and last an hour.' },
  ];

  it('quotes the best-matching sentences, every one cited, sources numbered by first use', () => {
    const written = extractiveAnswer('When does the museum open, and when do tours start?', sources);
    expect(written.sentences.length).toBeGreaterThan(0);
    for (const sentence of written.sentences) {
      expect(sentence).toMatch(/\[\d+\][.!?]$/);
    }
    const used = [...written.answer.matchAll(/\[(\d+)\]/g)].map((match) => Number(match[1]));
    expect(new Set(used)).toEqual(new Set(written.order.map((_source, index) => index + 1)));
    expect(used[0]).toBe(1);
    expect(written.answer).toContain('Guided tours of the museum start at ten');
  });

  it('falls back to the best source when only a title matched', () => {
    const written = extractiveAnswer('zebra', [{ text: 'Nothing about the animal here at all.' }]);
    expect(written.answer).toBe('Nothing about the animal here at all [1].');
    expect(written.order).toEqual([0]);
  });

  it('never quotes a Markdown heading as a sentence', () => {
    const markdown =
      '## Fuel dock\n\nThe fuel dock opens at six and closes at dusk.\n\nFuel dock rules\n===============\n\nPay at the dock office.';
    const written = extractiveAnswer('When does the fuel dock open?', [{ text: markdown }], 5);
    expect(written.sentences).toEqual([
      'The fuel dock opens at six and closes at dusk [1].',
      'Pay at the dock office [1].',
    ]);
  });

  it('falls back to the first sentence that is no heading', () => {
    const written = extractiveAnswer('zebra', [{ text: '# Harbour guide\n\nBoats moor at the east pier.' }]);
    expect(written.answer).toBe('Boats moor at the east pier [1].');
  });
});
