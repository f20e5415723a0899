/**
 * The `embed-passages` job (run here in-thread, as the background worker runs it): it reads the passages by id
 * on its own connection, its vectors are the lexical embedder's of each passage's title and text, its token count
 * is the raw o200k count of those texts, a passage removed after its claim is left out, and it writes nothing.
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

it('embeds the claimed passages read on its own connection and counts their tokens', async () => {
  const directory = mkdtempSync(path.join(tmpdir(), 'omnigate-embed-passages-'));
  directories.push(directory);
  const database = path.join(directory, 'omnigate.db');
  const db = openDatabase(database);
  const store = createPassageStore(db);
  const texts = ['The tide leaves the sea at dawn.', 'Sourdough wants a slow bake.', 'Gulls over the harbour.'];
  await store.replace({ fileId: 'file_1', keyId: 'key_1', title: 'notes.txt' }, texts, 1_000);
  const claimed = await store.claimUnembedded('local:embed', 10, 2_000, 60_000);
  expect(claimed.map((passage) => passage.text)).toEqual(texts);
  // The second passage goes between its claim and the job: it is left out.
  db.prepare('DELETE FROM search_passages WHERE id = ?').run(claimed[1]!.id);
  const changes = () => db.prepare('SELECT total_changes()').pluck().get();
  const changesBefore = changes();

  const dimensions = LEXICAL_DEFAULT_DIMENSIONS;
  const result = await embedPassages({ database, ids: claimed.map((passage) => passage.id), dimensions });

  const kept = [texts[0]!, texts[2]!].map((text) => `notes.txt\n${text}`);
  expect(result.ids).toEqual([claimed[0]!.id, claimed[2]!.id]);
  expect(result.tokens).toBe(kept.reduce((sum, text) => sum + rawCount(text), 0));
  expect(result.vectors).toEqual(Float32Array.from(lexicalEmbed({ inputs: kept, dimensions }).flat()));
  // Nothing written: no vector, the claims still there for the main thread's storeVectors to drop.
  expect(db.prepare('SELECT count(*) FROM search_passage_vectors').pluck().get()).toBe(0);
  expect(db.prepare('SELECT count(*) FROM search_passage_embed_claims').pluck().get()).toBe(2);
  expect(changes()).toBe(changesBefore);
  db.close();
});
