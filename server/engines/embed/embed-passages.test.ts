/**
 * The `embed-passages` job (run here in-thread, as the background worker runs it): the vectors it writes are the
 * lexical embedder's of each passage's title and text, its token count is the raw o200k count of those texts,
 * it drops the batch's claims, and a passage removed after its claim gets no vector.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { countTokens as rawCount } from 'gpt-tokenizer/encoding/o200k_base';
import { afterEach, expect, it } from 'vitest';
import { openDatabase } from '../../storage/database.js';
import { createPassageStore } from '../../storage/passage-store.js';
import { embedPassages } from './embed-passages.js';
import { LEXICAL_DEFAULT_DIMENSIONS, lexicalEmbed } from './lexical-embed.js';

const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) {
    rmSync(directory, { recursive: true, force: true });
  }
});

it('writes each claimed passage’s vector and counts its tokens, on its own connection', async () => {
  const directory = mkdtempSync(path.join(tmpdir(), 'omnigate-embed-passages-'));
  directories.push(directory);
  const database = path.join(directory, 'omnigate.db');
  const db = openDatabase(database);
  const store = createPassageStore(db);
  const texts = ['The tide leaves the sea at dawn.', 'Sourdough wants a slow bake.', 'Gulls over the harbour.'];
  await store.replace({ fileId: 'file_1', keyId: 'key_1', title: 'notes.txt' }, texts, 1_000);
  const claimed = await store.claimUnembedded('local:embed', 10, 2_000, 60_000);
  expect(claimed.map((passage) => passage.text)).toEqual(texts);
  const claimCount = () => db.prepare('SELECT count(*) FROM search_passage_embed_claims').pluck().get();
  expect(claimCount()).toBe(3);
  // The last passage goes between its claim and the job: it gets no vector.
  db.prepare('DELETE FROM search_passages WHERE id = ?').run(claimed[2]!.id);

  const result = await embedPassages({
    database,
    model: 'local:embed',
    ids: claimed.map((passage) => passage.id),
    dimensions: LEXICAL_DEFAULT_DIMENSIONS,
  });

  const embedded = texts.slice(0, 2).map((text) => `notes.txt\n${text}`);
  expect(result).toEqual({ stored: 2, tokens: embedded.reduce((sum, text) => sum + rawCount(text), 0) });
  const rows = db
    .prepare('SELECT passage_id AS id, model, vector FROM search_passage_vectors ORDER BY passage_id')
    .all() as Array<{ id: number; model: string; vector: Buffer }>;
  const expected = lexicalEmbed({ inputs: embedded, dimensions: LEXICAL_DEFAULT_DIMENSIONS });
  expect(rows.map((row) => row.id)).toEqual([claimed[0]!.id, claimed[1]!.id]);
  rows.forEach((row, index) => {
    expect(row.model).toBe('local:embed');
    expect([...new Float32Array(row.vector.buffer, row.vector.byteOffset, LEXICAL_DEFAULT_DIMENSIONS)]).toEqual([
      ...Float32Array.from(expected[index]!),
    ]);
  });
  expect(claimCount()).toBe(0);
  db.close();
});
