import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { minimalPdf } from '../../../test/helpers/minimal-pdf.js';
import { openDatabase } from '../../storage/database.js';
import { createPassageStore } from '../../storage/passage-store.js';
import { createLocalSearchIndex, type LocalSearchIndex } from './search-index.js';

let index: LocalSearchIndex | undefined;
afterEach(async () => {
  await index?.close();
});

const file = (id: string, filename: string, mediaType: string, bytes: Uint8Array) => ({
  id, keyId: 'key_1', filename, mediaType, bytes: bytes.length, open: () => Readable.from([Buffer.from(bytes)]),
});

describe('local search index', () => {
  it('indexes a PDF through the worker and cuts long text into passages', async () => {
    const passages = createPassageStore(openDatabase(':memory:'));
    index = createLocalSearchIndex({ passages });
    const long = Array.from({ length: 60 }, (_, n) => `Paragraph ${n} mentions the albatross once.`).join('\n\n');
    await index.add(file('f_pdf', 'birds.pdf', 'application/pdf', minimalPdf(['Petrels follow the ships south.'])));
    await index.add(file('f_txt', 'long.txt', 'text/plain', new TextEncoder().encode(long)));
    expect(index.search({ keyId: 'key_1', query: 'petrels', maxResults: 5 }).map((hit) => hit.fileId)).toEqual(['f_pdf']);
    expect(passages.count('key_1')).toBeGreaterThan(2);
    // One result per file, however many of its passages match.
    expect(index.search({ keyId: 'key_1', query: 'albatross', maxResults: 5 })).toHaveLength(1);
  });

  it('leaves a file removed while it was being indexed out of the index, and never throws for bad content', async () => {
    const passages = createPassageStore(openDatabase(':memory:'));
    index = createLocalSearchIndex({ passages });
    const adding = index.add(file('f_1', 'a.md', 'text/markdown', new TextEncoder().encode('Ephemeral notes on krill.')));
    index.remove('f_1');
    await adding;
    await index.add(file('f_bad', 'bad.pdf', 'application/pdf', new TextEncoder().encode('%PDF-1.7 garbage')));
    expect(index.search({ keyId: 'key_1', query: 'krill', maxResults: 5 })).toEqual([]);
    expect(passages.count('key_1')).toBe(0);
  });
});
