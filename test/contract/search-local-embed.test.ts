/**
 * Semantic file search with the built-in `local:embed` on a SQLite database file, as a server keeps its data: the
 * background worker reads the passages and writes their vectors itself (engines/embed/embed-passages.ts). Each
 * passage gets the lexical embedder's vector of its file's name and text, no claim is left, and the key's usage
 * records count the o200k tokens of exactly those texts (counted here with the raw gpt-tokenizer package).
 */
import { countTokens as rawCount } from 'gpt-tokenizer/encoding/o200k_base';
import request from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LEXICAL_DEFAULT_DIMENSIONS, lexicalEmbed } from '../../server/engines/embed/lexical-embed.js';
import { createTestApp, type TestApp } from '../helpers/create-test-app.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ searchEmbeddingModel: 'local:embed', databaseFile: true });
});

afterAll(async () => {
  await t.services.close();
});

it('embeds an upload’s passages in the background worker, as its owner’s usage', async () => {
  const paragraphs = Array.from(
    { length: 240 },
    (_, n) => `Log ${n}: the keeper trimmed the wick. ${'The beam swept the reef all night. '.repeat(25)}`,
  );
  const res = await request(t.app)
    .post('/v1/files')
    .set({ authorization: `Bearer ${t.key}` })
    .field('purpose', 'user_data')
    .attach('file', Buffer.from(paragraphs.join('\n\n')), 'lighthouse-log.txt');
  expect(res.status).toBe(200);
  await t.searchIndex.idle();
  await t.services.usage.flush();

  const passages = t.db
    .prepare(
      `SELECT p.title, p.body, v.model, v.vector FROM search_passages p
       LEFT JOIN search_passage_vectors v ON v.passage_id = p.id WHERE p.file_id = ? ORDER BY p.id`,
    )
    .all(res.body.id) as Array<{ title: string; body: string; model: string | null; vector: Buffer | null }>;
  // More passages than one background round takes, so several rounds ran.
  expect(passages.length).toBeGreaterThan(100);
  const texts = passages.map((passage) => `${passage.title}\n${passage.body}`);
  const expected = lexicalEmbed({ inputs: texts, dimensions: LEXICAL_DEFAULT_DIMENSIONS });
  passages.forEach((passage, index) => {
    expect(passage.model).toBe('local:embed');
    expect(passage.vector).not.toBeNull();
    const stored = new Float32Array(passage.vector!.buffer, passage.vector!.byteOffset, LEXICAL_DEFAULT_DIMENSIONS);
    expect([...stored]).toEqual([...Float32Array.from(expected[index]!)]);
  });
  expect(t.db.prepare('SELECT count(*) FROM search_passage_embed_claims').pluck().get()).toBe(0);

  const usage = await request(t.app)
    .get('/v1/usage')
    .set({ authorization: `Bearer ${t.key}` });
  const rows = usage.body.data.filter((row: { operation: string }) => row.operation === 'embedFilePassages') as Array<{
    model: string;
    input_tokens: number;
  }>;
  expect(rows.length).toBeGreaterThan(1);
  expect(rows.every((row) => row.model === 'local:embed')).toBe(true);
  expect(rows.reduce((sum, row) => sum + row.input_tokens, 0)).toBe(
    texts.reduce((sum, text) => sum + rawCount(text), 0),
  );

  // And the search finds the file by a word of it.
  const found = await request(t.app)
    .post('/v1/web/search')
    .set({ authorization: `Bearer ${t.key}` })
    .send({ model: 'local:search', query: 'keeper wick' });
  expect(found.status).toBe(200);
  expect(found.body.results[0]?.title).toBe('lighthouse-log.txt');
});
