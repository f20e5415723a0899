import { describe, expect, it } from 'vitest';
import { DEFAULT_EXTRACTION_LIMITS } from './extract-text.js';
import { extractPassages } from './extract-passages.js';
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

  it('passes a refusal through', async () => {
    expect(await extractPassages({ bytes: new Uint8Array([0x61, 0, 0x62]), kind: 'text' })).toMatchObject({
      refused: 'not_text',
    });
  });
});
