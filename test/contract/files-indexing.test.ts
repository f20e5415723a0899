/**
 * Uploads answer once their bytes are stored, and what the search index makes of a file afterwards is on the
 * file: a PDF bomb (one content stream inflating to 400 MB) and a PDF of 20,000 pages, both made here, answer at
 * once as `indexing` and end `failed` with the reason, without the process's memory following the bomb, while
 * another key's small upload is answered and indexed meanwhile. Searching while a file is still being indexed
 * says so (`files_indexing`).
 */
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createMediaPool, type MediaPool } from '../../server/engines/media-pool.js';
import { createTestApp, type TestApp } from '../helpers/create-test-app.js';
import { manyPagesPdf, pdfBomb } from '../helpers/hostile-pdfs.js';
import { assertMatchesSchema } from '../helpers/spec-schemas.js';

const MIB = 1024 * 1024;
const auth = (key: string) => ({ authorization: `Bearer ${key}` });
const apps: TestApp[] = [];
const pools: MediaPool[] = [];

afterEach(async () => {
  await Promise.all(
    apps.splice(0).map(async (made) => {
      await made.searchIndex.close();
      await made.registry.close();
    }),
  );
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});

function upload(made: TestApp, key: string, bytes: Uint8Array, filename: string) {
  return request(made.app)
    .post('/v1/files')
    .set(auth(key))
    .field('purpose', 'user_data')
    .attach('file', Buffer.from(bytes), { filename });
}

/** The file as GET shows it, once `indexing.status` is no longer `indexing`. */
async function settled(made: TestApp, key: string, id: string): Promise<Record<string, any>> {
  for (;;) {
    const got = await request(made.app).get(`/v1/files/${id}`).set(auth(key));
    expect(got.status).toBe(200);
    if (got.body.indexing?.status !== 'indexing') {
      return got.body;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('indexing after the upload has answered', () => {
  it('answers a PDF bomb at once, refuses it on the decompressed cap with bounded memory, and indexes another key meanwhile', async () => {
    const made = await createTestApp();
    apps.push(made);
    const other = (await made.keys.create({ name: 'other' })).key;
    const bomb = await pdfBomb(400 * MIB);
    expect(bomb.length).toBeLessThan(2 * MIB);

    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 5);
    try {
      const uploaded = await upload(made, made.key, bomb, 'bomb.pdf');
      expect(uploaded.status).toBe(200);
      // Answered before the extraction finished: the answer itself still says `indexing`.
      expect(uploaded.body).toMatchObject({
        status: 'uploaded',
        indexing: { status: 'indexing', reason: null, code: null },
      });
      assertMatchesSchema('FileObject', uploaded.body);

      const small = await upload(made, other, Buffer.from('quartz lantern harbour ledger'), 'ledger.txt');
      expect(small.status).toBe(200);
      expect(small.body.indexing.status).toBe('indexing');

      const refused = await settled(made, made.key, uploaded.body.id);
      expect(refused).toMatchObject({
        status: 'processed',
        indexing: {
          status: 'failed',
          code: 'decompressed_too_large',
          reason: expect.stringContaining('OMNIGATE_INDEX_MAX_DECOMPRESSED_BYTES'),
        },
      });
      assertMatchesSchema('FileObject', refused);
      expect((await settled(made, other, small.body.id)).indexing).toEqual({
        status: 'indexed',
        reason: null,
        code: null,
      });
    } finally {
      clearInterval(sampler);
    }
    // Decoding the stream whole costs about 1 GB; measuring it costs the worker thread and zlib's window.
    expect(peak - baseline).toBeLessThan(256 * MIB);

    const found = await request(made.app)
      .post('/v1/web/search')
      .set(auth(other))
      .send({ model: 'local:search', query: 'lantern ledger' });
    expect(found.body.results.map((result: { title: string }) => result.title)).toEqual(['ledger.txt']);
    // The refused file stays stored: its bytes download as uploaded.
    const content = await request(made.app)
      .get(`/v1/files/${(await request(made.app).get('/v1/files').set(auth(made.key))).body.data[0].id}/content`)
      .set(auth(made.key));
    expect(content.status).toBe(200);
  }, 120_000);

  it('answers a PDF of 20,000 pages at once and refuses it on the page cap', async () => {
    const made = await createTestApp();
    apps.push(made);
    const uploaded = await upload(made, made.key, manyPagesPdf(20_000), 'long.pdf');
    expect(uploaded.status).toBe(200);
    expect(uploaded.body.indexing.status).toBe('indexing');
    expect((await settled(made, made.key, uploaded.body.id)).indexing).toEqual({
      status: 'failed',
      code: 'too_many_pages',
      reason: 'The PDF has 20000 pages; at most 2000 are indexed (OMNIGATE_INDEX_MAX_PAGES).',
    });
  }, 60_000);

  it('says a file that is not text is not indexed, in the upload answer itself', async () => {
    const made = await createTestApp();
    apps.push(made);
    const png = Buffer.from(
      '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a0d7e1c70000000049454e44ae426082',
      'hex',
    );
    const uploaded = await upload(made, made.key, png, 'dot.png');
    expect(uploaded.body).toMatchObject({
      status: 'processed',
      indexing: { status: 'not_indexed', code: 'not_text', reason: expect.stringContaining('image/png') },
    });
  });

  // On a database file the extraction worker writes the passages on its own connection; in memory the main thread.
  it.each([
    ['in memory', false],
    ['in a database file', true],
  ])(
    'says how many files are still being indexed when a search or an answer runs before them (SQLite %s)',
    async (_, databaseFile) => {
      const pool = createMediaPool({ workers: 1, queueLimit: 10, jobTimeoutMs: 60_000 });
      pools.push(pool);
      const made = await createTestApp({ searchIndexPool: pool, databaseFile });
      apps.push(made);
      expect(made.services.stores.passages.databaseFile !== undefined).toBe(databaseFile);
      // Hold the index's only worker, so the upload's extraction waits.
      let release!: () => void;
      const held = pool.use(new AbortController().signal, () => new Promise<void>((resolve) => (release = resolve)));

      const uploaded = await upload(
        made,
        made.key,
        Buffer.from('The keeper winds the clockwork lamp at dusk.'),
        'lamp.txt',
      );
      expect(uploaded.body).toMatchObject({ status: 'uploaded', indexing: { status: 'indexing' } });
      expect(
        (await request(made.app).get(`/v1/files/${uploaded.body.id}`).set(auth(made.key))).body.indexing.status,
      ).toBe('indexing');
      const early = await request(made.app)
        .post('/v1/web/search')
        .set(auth(made.key))
        .send({ model: 'local:search', query: 'clockwork lamp' });
      expect(early.body).toMatchObject({ results: [], files_indexing: 1 });
      const answer = await request(made.app)
        .post('/v1/search/answer')
        .set(auth(made.key))
        .send({ query: 'What does the keeper wind?' });
      expect(answer.status).toBe(200);
      expect(answer.body.files_indexing).toBe(1);
      const streamed = await request(made.app)
        .post('/v1/search/answer')
        .set(auth(made.key))
        .send({ query: 'What does the keeper wind?', stream: true });
      const citationsEvent = JSON.parse(/event: answer\.citations\ndata: (.*)\n/.exec(streamed.text)![1]);
      expect(citationsEvent).toMatchObject({ type: 'answer.citations', files_indexing: 1 });
      // Another key has nothing being indexed: its search says nothing of it.
      const stranger = (await made.keys.create({ name: 'stranger' })).key;
      const theirs = await request(made.app)
        .post('/v1/web/search')
        .set(auth(stranger))
        .send({ model: 'local:search', query: 'clockwork lamp' });
      expect(theirs.body).not.toHaveProperty('files_indexing');

      release();
      await held;
      expect((await settled(made, made.key, uploaded.body.id)).indexing.status).toBe('indexed');
      const late = await request(made.app)
        .post('/v1/web/search')
        .set(auth(made.key))
        .send({ model: 'local:search', query: 'clockwork lamp' });
      expect(late.body.results.map((result: { title: string }) => result.title)).toEqual(['lamp.txt']);
      expect(late.body).not.toHaveProperty('files_indexing');
    },
    60_000,
  );

  it('on a database file, a file deleted while the extraction worker writes its passages leaves none found', async () => {
    const made = await createTestApp({ databaseFile: true });
    apps.push(made);
    const passages = made.services.stores.passages;
    const text = Array.from(
      { length: 3_000 },
      (_, n) => `Paragraph ${n} about the lighthouse. ${'Waves on rocks. '.repeat(58)}`,
    ).join('\n\n');
    const uploaded = await upload(made, made.key, Buffer.from(text), 'log.txt');
    expect(uploaded.status).toBe(200);
    // The worker has begun writing: its first transactions are visible to the main thread's connection.
    while ((await passages.count(made.keyId)) === 0) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect((await request(made.app).delete(`/v1/files/${uploaded.body.id}`).set(auth(made.key))).status).toBe(200);
    // From the delete on, no passage of the file is there, also while the worker's job finishes.
    const seen: number[] = [];
    let done = false;
    void made.searchIndex.idle().then(() => {
      done = true;
    });
    while (!done) {
      seen.push(await passages.count(made.keyId));
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    seen.push(await passages.count(made.keyId));
    expect(seen.filter((count) => count > 0)).toEqual([]);
    const search = await request(made.app)
      .post('/v1/web/search')
      .set(auth(made.key))
      .send({ model: 'local:search', query: 'lighthouse' });
    expect(search.body).toMatchObject({ results: [] });
    expect(search.body).not.toHaveProperty('files_indexing');
  }, 60_000);
});
