import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { minimalPdf } from '../../../test/helpers/minimal-pdf.js';
import { createMediaPool } from '../../engines/media-pool.js';
import { openDatabase } from '../../storage/database.js';
import { createPassageStore } from '../../storage/passage-store.js';
import { createLocalSearchIndex, type LocalSearchIndex } from './search-index.js';

let index: LocalSearchIndex | undefined;
afterEach(async () => {
  await index?.close();
});

const file = (id: string, filename: string, mediaType: string, bytes: Uint8Array, keyId = 'key_1') => ({
  id,
  keyId,
  filename,
  mediaType,
  bytes: bytes.length,
  open: async () => Readable.from([Buffer.from(bytes)]),
});
const never = () => new AbortController().signal;

describe('local search index', () => {
  it('indexes a PDF through the worker and cuts long text into passages', async () => {
    const passages = createPassageStore(openDatabase(':memory:'));
    index = createLocalSearchIndex({ passages });
    const long = Array.from({ length: 60 }, (_, n) => `Paragraph ${n} mentions the albatross once.`).join('\n\n');
    await index.add(file('f_pdf', 'birds.pdf', 'application/pdf', minimalPdf(['Petrels follow the ships south.'])));
    await index.add(file('f_txt', 'long.txt', 'text/plain', new TextEncoder().encode(long)));
    expect((await index.search({ keyId: 'key_1', query: 'petrels', maxResults: 5 })).map((hit) => hit.fileId)).toEqual([
      'f_pdf',
    ]);
    expect(await passages.count('key_1')).toBeGreaterThan(2);
    // One result per file, however many of its passages match.
    expect(await index.search({ keyId: 'key_1', query: 'albatross', maxResults: 5 })).toHaveLength(1);
  });

  it('leaves a file removed while it was being indexed out of the index, and never throws for bad content', async () => {
    const passages = createPassageStore(openDatabase(':memory:'));
    index = createLocalSearchIndex({ passages });
    const adding = index.add(
      file('f_1', 'a.md', 'text/markdown', new TextEncoder().encode('Ephemeral notes on krill.')),
    );
    await index.remove('f_1');
    await adding;
    await index.add(file('f_bad', 'bad.pdf', 'application/pdf', new TextEncoder().encode('%PDF-1.7 garbage')));
    expect(await index.search({ keyId: 'key_1', query: 'krill', maxResults: 5 })).toEqual([]);
    expect(await passages.count('key_1')).toBe(0);
  });

  it('queues extraction under the file’s key: past the key’s cap a key is refused with 429, another key’s file is still read', async () => {
    index = createLocalSearchIndex({ passages: createPassageStore(openDatabase(':memory:')), perKeyLimit: 1 });
    const pdf = (id: string, keyId: string) =>
      file(id, `${id}.pdf`, 'application/pdf', minimalPdf([`Notes of ${keyId}.`]), keyId);
    const outcomes = await Promise.allSettled([
      index.text(pdf('f_a1', 'key_a'), never()),
      index.text(pdf('f_a2', 'key_a'), never()),
      index.text(pdf('f_b1', 'key_b'), never()),
    ]);
    const [first, second, other] = outcomes;
    // Whichever of key_a's two reached the pool first holds the key's one place; the other is refused.
    const refusals = [first, second].filter((outcome) => outcome.status === 'rejected');
    expect(refusals).toHaveLength(1);
    expect((refusals[0] as PromiseRejectedResult).reason).toMatchObject({ status: 429, code: 'key_jobs_limit' });
    expect(other).toEqual({ status: 'fulfilled', value: { text: expect.stringContaining('Notes of key_b.') } });
  });

  it('refuses a file whose extraction outgrows the worker heap as too large, and extracts the next file on a fresh worker', async () => {
    const pool = createMediaPool({ workers: 1, queueLimit: 1, jobTimeoutMs: 60_000, heapMb: 64 });
    index = createLocalSearchIndex({ passages: createPassageStore(openDatabase(':memory:')), pool });
    try {
      const html = new TextEncoder().encode(`<html><body>${'<p><b>x</b></p>'.repeat(1_000_000)}</body></html>`);
      await expect(index.text(file('f_huge', 'huge.html', 'text/html', html), never())).resolves.toEqual({
        refused: 'too_large',
        reason: expect.stringContaining('more memory than the extraction worker may use'),
      });
      const small = new TextEncoder().encode('<html><body><p>Storm petrels</p></body></html>');
      await expect(index.text(file('f_small', 'small.html', 'text/html', small), never())).resolves.toEqual({
        text: expect.stringContaining('Storm petrels'),
      });
    } finally {
      await pool.close();
    }
  });
});
