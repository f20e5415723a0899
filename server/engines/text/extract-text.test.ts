import { describe, expect, it } from 'vitest';
import { minimalPdf } from '../../../test/helpers/minimal-pdf.js';
import { extractText } from './extract-text.js';
import { textKindOf } from './text-kind.js';

const utf8 = (text: string) => new TextEncoder().encode(text);

describe('extractText', () => {
  it('reads the text of a PDF', async () => {
    const text = await extractText({ bytes: minimalPdf(['Heliotrope gardens bloom in spring.', 'A line (with parens).']), kind: 'pdf' });
    expect(text).toContain('Heliotrope gardens bloom in spring.');
    expect(text).toContain('A line (with parens).');
  });

  it('gives nothing for a damaged PDF', async () => {
    expect(await extractText({ bytes: utf8('%PDF-1.4 not really'), kind: 'pdf' })).toBeUndefined();
  });

  it('drops HTML markup and scripts, keeps table cells apart and headings as written', async () => {
    const html = '<h1>Opening Hours</h1><script>var x = 1;</script><table><tr><th>Day</th><th>Open</th></tr><tr><td>Monday</td><td>9am</td></tr></table>';
    const text = (await extractText({ bytes: utf8(html), kind: 'html' }))!;
    expect(text).toContain('Opening Hours');
    expect(text).not.toContain('var x');
    expect(text).toMatch(/Monday\s+9am/);
    expect(text).not.toContain('Monday9am');
  });

  it('turns JSON into path: value lines', async () => {
    const text = await extractText({ bytes: utf8(JSON.stringify({ city: { name: 'Lisbon', tags: ['port', 'hills'] } })), kind: 'json' });
    expect(text).toBe('city.name: Lisbon\ncity.tags[0]: port\ncity.tags[1]: hills');
  });

  it('refuses bytes that are not text', async () => {
    expect(await extractText({ bytes: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 2]), kind: 'text' })).toBeUndefined();
    expect(await extractText({ bytes: new Uint8Array([0xff, 0xfe, 0xfd]), kind: 'markdown' })).toBeUndefined();
  });
});

describe('textKindOf', () => {
  it.each([
    ['text/plain', 'notes.md', 'markdown'],
    ['text/plain', 'table.csv', 'csv'],
    ['application/pdf', 'paper.txt', 'pdf'],
    ['text/html; charset=utf-8', 'page', 'html'],
    ['application/octet-stream', 'data.json', 'json'],
    ['image/png', 'picture.txt', undefined],
    ['application/octet-stream', 'blob.bin', undefined],
  ])('%s named %s reads as %s', (mediaType, filename, kind) => {
    expect(textKindOf(mediaType, filename)).toBe(kind);
  });
});
