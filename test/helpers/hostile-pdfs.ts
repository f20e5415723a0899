/**
 * PDFs made to cost an extractor: a page whose FlateDecode content stream inflates to hundreds of MB, and a
 * document of thousands of pages. Both are written byte by byte with a correct cross-reference table, so a real
 * parser (pdf.js) reads them as valid; the bomb is deflated as a stream, so making it never holds its inflated size.
 */
import { constants, createDeflate } from 'node:zlib';

/** A PDF of the given object bodies (object 1 must be the catalog), with a correct xref table. */
export function pdfOf(objects: Array<string | Buffer>): Buffer {
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n', 'latin1')];
  let length = parts[0].length;
  const offsets: number[] = [];
  objects.forEach((body, index) => {
    offsets.push(length);
    const piece = Buffer.concat([
      Buffer.from(`${index + 1} 0 obj\n`, 'latin1'),
      typeof body === 'string' ? Buffer.from(body, 'latin1') : body,
      Buffer.from('\nendobj\n', 'latin1'),
    ]);
    parts.push(piece);
    length += piece.length;
  });
  const table = offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('');
  parts.push(
    Buffer.from(
      `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${table}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${length}\n%%EOF\n`,
      'latin1',
    ),
  );
  return Buffer.concat(parts);
}

/** `count` bytes of `unit` repeated, deflated as one zlib stream without ever holding them. */
async function deflatedRepeat(unit: string, count: number): Promise<Buffer> {
  const chunk = Buffer.from(unit.repeat(Math.ceil((1024 * 1024) / unit.length)), 'latin1');
  const deflate = createDeflate({ level: constants.Z_BEST_COMPRESSION });
  const out: Buffer[] = [];
  deflate.on('data', (piece: Buffer) => out.push(piece));
  const done = new Promise((resolve, reject) => deflate.on('end', resolve).on('error', reject));
  for (let written = 0; written < count; written += chunk.length) {
    if (!deflate.write(chunk)) {
      await new Promise((resolve) => deflate.once('drain', resolve));
    }
  }
  deflate.end();
  await done;
  return Buffer.concat(out);
}

/** One page whose content stream (lines drawn, no text) inflates to about `inflatedBytes`. */
export async function pdfBomb(inflatedBytes: number): Promise<Buffer> {
  const stream = await deflatedRepeat('0 0 m 1 1 l S\n', inflatedBytes);
  return pdfOf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>',
    Buffer.concat([
      Buffer.from(`<< /Length ${stream.length} /Filter /FlateDecode >>\nstream\n`, 'latin1'),
      stream,
      Buffer.from('\nendstream', 'latin1'),
    ]),
  ]);
}

/** `pages` pages sharing one short content stream with a line of text. */
export function manyPagesPdf(pages: number): Buffer {
  const content = 'BT /F1 12 Tf 72 720 Td (Page of a very long document) Tj ET';
  const first = 5;
  const kids = Array.from({ length: pages }, (_, index) => `${first + index} 0 R`).join(' ');
  return pdfOf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${kids}] /Count ${pages} >>`,
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
    ...Array.from(
      { length: pages },
      () =>
        '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R /Resources << /Font << /F1 4 0 R >> >> >>',
    ),
  ]);
}
