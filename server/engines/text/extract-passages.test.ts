import { describe, expect, it } from 'vitest';
import { DEFAULT_EXTRACTION_LIMITS } from './extract-text.js';
import { extractPassages, PASSAGES_PER_MESSAGE } from './extract-passages.js';
import { splitIntoPassages } from './passages.js';

const utf8 = (text: string) => new TextEncoder().encode(text);
const long = Array.from({ length: 80 }, (_, n) => `Paragraph ${n} is about the lighthouse keeper's lamp.`).join('\n\n');

describe('extractPassages (the extraction worker’s job)', () => {
  it('answers the passages splitIntoPassages cuts from the extracted text', async () => {
    const answer = await extractPassages({ bytes: utf8(long), kind: 'text' });
    expect(answer).toEqual({ passages: splitIntoPassages(long) });
    expect((answer as { passages: string[] }).passages.length).toBeGreaterThan(2);
  });

  it('cuts only the text within the character cap, and says it was truncated', async () => {
    const limits = { ...DEFAULT_EXTRACTION_LIMITS, maxCharacters: 500 };
    const answer = await extractPassages({ bytes: utf8(long), kind: 'text', limits });
    expect(answer).toEqual({ passages: splitIntoPassages(long.slice(0, 500)), truncated: true });
  });

  it('sends all but the last PASSAGES_PER_MESSAGE-sized part ahead, in order, when given where to', async () => {
    const many = Array.from(
      { length: 2 * PASSAGES_PER_MESSAGE + 7 },
      (_, n) => `Passage ${n}. ${'Tide. '.repeat(170)}`,
    );
    const text = many.join('\n\n');
    const all = splitIntoPassages(text);
    const parts: string[][] = [];
    const answer = (await extractPassages({ bytes: utf8(text), kind: 'text' }, (part) => parts.push(part))) as {
      passages: string[];
    };
    expect(parts.map((part) => part.length)).toEqual([PASSAGES_PER_MESSAGE, PASSAGES_PER_MESSAGE]);
    expect(answer.passages.length).toBeGreaterThan(0);
    expect(answer.passages.length).toBeLessThanOrEqual(PASSAGES_PER_MESSAGE);
    expect([...parts.flat(), ...answer.passages]).toEqual(all);
  });

  it('passes a refusal through', async () => {
    expect(await extractPassages({ bytes: new Uint8Array([0x61, 0, 0x62]), kind: 'text' })).toMatchObject({
      refused: 'not_text',
    });
  });
});
