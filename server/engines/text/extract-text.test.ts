import { describe, expect, it } from 'vitest';
import { minimalPdf } from '../../../test/helpers/minimal-pdf.js';
import { manyPagesPdf, pdfBomb, pdfOf } from '../../../test/helpers/hostile-pdfs.js';
import { DEFAULT_EXTRACTION_LIMITS, extractText, type ExtractedText } from './extract-text.js';
import { textKindOf } from './text-kind.js';

const utf8 = (text: string) => new TextEncoder().encode(text);
const textOf = (extracted: ExtractedText) => ('text' in extracted ? extracted.text : undefined);

describe('extractText', () => {
  it('reads the text of a PDF', async () => {
    const text = textOf(
      await extractText({
        bytes: minimalPdf(['Heliotrope gardens bloom in spring.', 'A line (with parens).']),
        kind: 'pdf',
      }),
    );
    expect(text).toContain('Heliotrope gardens bloom in spring.');
    expect(text).toContain('A line (with parens).');
  });

  it('refuses a damaged PDF as unreadable, saying why', async () => {
    expect(await extractText({ bytes: utf8('%PDF-1.4 not really'), kind: 'pdf' })).toMatchObject({
      refused: 'unreadable',
      reason: expect.stringContaining('could not be read'),
    });
  });

  it('drops HTML markup and scripts, keeps table cells apart and headings as written', async () => {
    const html =
      '<h1>Opening Hours</h1><script>var x = 1;</script><table><tr><th>Day</th><th>Open</th></tr><tr><td>Monday</td><td>9am</td></tr></table>';
    const text = textOf(await extractText({ bytes: utf8(html), kind: 'html' }))!;
    expect(text).toContain('Opening Hours');
    expect(text).not.toContain('var x');
    expect(text).toMatch(/Monday\s+9am/);
    expect(text).not.toContain('Monday9am');
  });

  it('turns JSON into path: value lines', async () => {
    const text = textOf(
      await extractText({
        bytes: utf8(JSON.stringify({ city: { name: 'Lisbon', tags: ['port', 'hills'] } })),
        kind: 'json',
      }),
    );
    expect(text).toBe('city.name: Lisbon\ncity.tags[0]: port\ncity.tags[1]: hills');
  });

  it('refuses bytes that are not text', async () => {
    expect(await extractText({ bytes: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 2]), kind: 'text' })).toMatchObject(
      { refused: 'not_text' },
    );
    expect(await extractText({ bytes: new Uint8Array([0xff, 0xfe, 0xfd]), kind: 'markdown' })).toMatchObject({
      refused: 'not_text',
    });
  });
});

describe('extractText within its limits', () => {
  const limits = (change: Partial<typeof DEFAULT_EXTRACTION_LIMITS>) => ({ ...DEFAULT_EXTRACTION_LIMITS, ...change });

  it('refuses a PDF whose content stream inflates past the decompressed cap, before pdf.js decodes it', async () => {
    const bomb = await pdfBomb(4 * 1024 * 1024);
    expect(
      await extractText({ bytes: bomb, kind: 'pdf', limits: limits({ maxDecompressedBytes: 1024 * 1024 }) }),
    ).toMatchObject({
      refused: 'decompressed_too_large',
      reason: expect.stringContaining('OMNIGATE_INDEX_MAX_DECOMPRESSED_BYTES'),
    });
    // The control: the same file under a cap it fits is read (a page of lines: no text, but no refusal).
    expect(
      await extractText({ bytes: bomb, kind: 'pdf', limits: limits({ maxDecompressedBytes: 8 * 1024 * 1024 }) }),
    ).toEqual({ text: '' });
  }, 60_000);

  it('counts a stream that calls itself an image, behind a name holding `stream`, and a chain of two FlateDecode filters layer by layer', async () => {
    const { deflateSync } = await import('node:zlib');
    const inner = deflateSync(Buffer.alloc(8 * 1024 * 1024, 0x20));
    const twice = deflateSync(inner);
    const stream = (dictionary: string, data: Buffer) =>
      Buffer.concat([
        Buffer.from(`<< /Length ${data.length} ${dictionary} >>\nstream\n`, 'latin1'),
        data,
        Buffer.from('\nendstream', 'latin1'),
      ]);
    const pdf = pdfOf([
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>',
      // A name holding `stream` must not make the scan start early and skip the real stream after it.
      stream('/Decoy /Headstream /Subtype /Image /Filter [/FlateDecode /FlateDecode]', twice),
    ]);
    // One layer inflates to ~8 KB; only the second reaches 8 MiB.
    expect(
      await extractText({ bytes: pdf, kind: 'pdf', limits: limits({ maxDecompressedBytes: 1024 * 1024 }) }),
    ).toMatchObject({ refused: 'decompressed_too_large' });
  });

  it('measures a stream whose keyword ends its line with a lone CR and whose data holds planted `endstream` bytes', async () => {
    const { constants, createDeflate } = await import('node:zlib');
    // A stored (level 0) deflate block carries its bytes as they are: here `endstream`; then the bulk compresses.
    const deflate = createDeflate({ level: 0 });
    const pieces: Buffer[] = [];
    deflate.on('data', (piece: Buffer) => pieces.push(piece));
    const ended = new Promise((resolve) => deflate.on('end', resolve));
    deflate.write(Buffer.from('\nendstream\n'));
    await new Promise((resolve) => deflate.flush(constants.Z_FULL_FLUSH, () => resolve(undefined)));
    await new Promise((resolve) => deflate.params(9, constants.Z_DEFAULT_STRATEGY, () => resolve(undefined)));
    deflate.end(Buffer.alloc(8 * 1024 * 1024, 0x20));
    await ended;
    const data = Buffer.concat(pieces);
    expect(data.includes('endstream')).toBe(true);
    const pdf = pdfOf([
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>',
      Buffer.concat([
        Buffer.from(`<< /Length ${data.length} /Filter /FlateDecode >>stream\r`, 'latin1'),
        data,
        Buffer.from('\nendstream', 'latin1'),
      ]),
    ]);
    expect(
      await extractText({ bytes: pdf, kind: 'pdf', limits: limits({ maxDecompressedBytes: 1024 * 1024 }) }),
    ).toMatchObject({ refused: 'decompressed_too_large' });
  });

  it('refuses a PDF of more pages than the cap before parsing a page, and reads one within it', async () => {
    expect(await extractText({ bytes: manyPagesPdf(20_000), kind: 'pdf' })).toMatchObject({
      refused: 'too_many_pages',
      reason: 'The PDF has 20000 pages; at most 2000 are indexed (OMNIGATE_INDEX_MAX_PAGES).',
    });
    const small = await extractText({ bytes: manyPagesPdf(3), kind: 'pdf', limits: limits({ maxPages: 3 }) });
    expect(textOf(small)?.match(/Page of a very long document/g)).toHaveLength(3);
  });

  it('keeps the first maxCharacters characters and says truncated, PDF pages and plain text alike', async () => {
    const pdf = await extractText({ bytes: manyPagesPdf(5), kind: 'pdf', limits: limits({ maxCharacters: 100 }) });
    expect(pdf).toMatchObject({ truncated: true });
    expect(textOf(pdf)).toHaveLength(100);
    // The whole document is longer: the cap cut it, it did not refuse it.
    expect(textOf(await extractText({ bytes: manyPagesPdf(5), kind: 'pdf' }))!.length).toBeGreaterThan(100);
    expect(
      await extractText({ bytes: utf8(`${'a'.repeat(100)}b`), kind: 'text', limits: limits({ maxCharacters: 100 }) }),
    ).toEqual({ text: 'a'.repeat(100), truncated: true });
    expect(
      await extractText({ bytes: utf8('a'.repeat(100)), kind: 'text', limits: limits({ maxCharacters: 100 }) }),
    ).toEqual({ text: 'a'.repeat(100) });
  });

  it('stops between pages once the time budget is spent (a budget no 200-page parse fits in)', async () => {
    const pdf = manyPagesPdf(200);
    expect(await extractText({ bytes: pdf, kind: 'pdf', limits: limits({ budgetMs: 1 }) })).toMatchObject({
      refused: 'time_budget',
      reason: expect.stringContaining('OMNIGATE_INDEX_TIME_BUDGET_MS'),
    });
    expect(textOf(await extractText({ bytes: pdf, kind: 'pdf' }))?.match(/Page of a very long document/g)).toHaveLength(
      200,
    );
  });

  it('refuses an encrypted PDF, whose streams cannot be measured before decoding', async () => {
    const pdf = Buffer.from(minimalPdf(['secret']));
    const encrypted = Buffer.from(
      pdf.toString('latin1').replace('/Root 1 0 R', '/Root 1 0 R /Encrypt << /Filter /Standard /V 1 /R 2 >>'),
      'latin1',
    );
    expect(await extractText({ bytes: encrypted, kind: 'pdf' })).toMatchObject({ refused: 'encrypted' });
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
