/**
 * The offline path of the files and search issue, end to end over HTTP: a user uploads a PDF and a Markdown
 * file, waits until both say `indexed`, finds both with `/v1/web/search` on the local provider, and gets an
 * answer whose every sentence cites one of them; deleting a file takes it out of the results.
 */
import { readFileSync } from 'node:fs';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestApp } from '../helpers/create-test-app.js';
import { ROOT } from '../helpers/spawn-server.js';

const t = await createTestApp();
const auth = { authorization: `Bearer ${t.key}` };
const MARKDOWN =
  '# Keeping the light\n\nThe keeper trims the wick each morning.\n\nThe keeper logs every passing ship in the daybook.\n';

afterAll(async () => {
  await t.registry.close();
});

describe('upload, search, answer', () => {
  it('finds an uploaded PDF and Markdown once indexed and answers with every sentence cited', async () => {
    const pdf = await request(t.app)
      .post('/v1/files')
      .set(auth)
      .field('purpose', 'user_data')
      .attach('file', readFileSync(`${ROOT}/test/fixtures/lighthouse-guide.pdf`), 'lighthouse-guide.pdf');
    const md = await request(t.app)
      .post('/v1/files')
      .set(auth)
      .field('purpose', 'user_data')
      .attach('file', Buffer.from(MARKDOWN), 'keeping.md');
    expect([pdf.status, md.status]).toEqual([200, 200]);
    expect(pdf.body.content_type).toBe('application/pdf');
    await t.searchIndex.idle();
    for (const id of [pdf.body.id, md.body.id]) {
      expect((await request(t.app).get(`/v1/files/${id}`).set(auth)).body).toMatchObject({
        status: 'processed',
        indexing: { status: 'indexed' },
      });
    }

    const found = await request(t.app)
      .post('/v1/web/search')
      .set(auth)
      .send({ model: 'local:search', query: 'keeper lens fog ship' });
    expect(found.status).toBe(200);
    const titles = (found.body.results as Array<{ title: string; url: string }>).map((result) => result.title).sort();
    expect(titles).toEqual(['keeping.md', 'lighthouse-guide.pdf']);
    const pdfResult = (found.body.results as Array<{ title: string; url: string }>).find(
      (result) => result.title === 'lighthouse-guide.pdf',
    )!;
    expect(new URL(pdfResult.url).pathname).toBe(`/v1/files/${pdf.body.id}/content`);

    const answer = await request(t.app)
      .post('/v1/search/answer')
      .set(auth)
      .send({ query: 'What does the keeper do in fog and at dusk?' });
    expect(answer.status).toBe(200);
    const { citations } = answer.body as { answer: string; citations: Array<{ index: number; title: string }> };
    const sentences = (answer.body.answer as string)
      .split(/(?<=[.!?](?:\[\d+\])*)\s+/)
      .filter((sentence) => sentence.trim());
    expect(sentences.length).toBeGreaterThan(0);
    for (const sentence of sentences) {
      expect(sentence, sentence).toMatch(/\[\d+\]/);
    }
    const used = new Set([...(answer.body.answer as string).matchAll(/\[(\d+)\]/g)].map((match) => Number(match[1])));
    expect(new Set(citations.map((citation) => citation.index))).toEqual(used);
    expect(citations.some((citation) => citation.title === 'lighthouse-guide.pdf')).toBe(true);

    await request(t.app).delete(`/v1/files/${pdf.body.id}`).set(auth).expect(200);
    const after = await request(t.app).post('/v1/web/search').set(auth).send({ query: 'Fresnel lens fog horn' });
    expect((after.body.results as Array<{ title: string }>).map((result) => result.title)).not.toContain(
      'lighthouse-guide.pdf',
    );
  });
});

describe('local search scores and answers over Markdown', () => {
  it('scores results by bm25, higher is better, never all 0', async () => {
    const files = {
      'harbour.md':
        '## Fuel dock\n\nThe fuel dock sells diesel. The fuel dock opens at six; fuel is paid at the dock.\n',
      'moorings.md':
        '# Moorings\n\nVisitors moor at the east pier; the harbour master keeps a list of free berths near the fuel dock.\n',
      'weather.md': '# Weather\n\nStorm flags are raised at the pier head when a gale is forecast.\n',
    };
    for (const [name, text] of Object.entries(files)) {
      const uploaded = await request(t.app)
        .post('/v1/files')
        .set(auth)
        .field('purpose', 'user_data')
        .attach('file', Buffer.from(text), name);
      expect(uploaded.status).toBe(200);
    }
    // An upload answers once its bytes are stored; its text is indexed after (on a busy machine, after the search).
    await t.searchIndex.idle();
    const found = await request(t.app)
      .post('/v1/web/search')
      .set(auth)
      .send({ model: 'local:search', query: 'fuel dock' });
    expect(found.status).toBe(200);
    const results = found.body.results as Array<{ title: string; score: number }>;
    expect(results.map((result) => result.title)).toEqual(['harbour.md', 'moorings.md']);
    expect(results[0]!.score).toBeGreaterThan(results[1]!.score);
    expect(results[1]!.score).toBeGreaterThan(0);

    const answer = await request(t.app)
      .post('/v1/search/answer')
      .set(auth)
      .send({ query: 'When does the fuel dock open?' });
    expect(answer.status).toBe(200);
    expect(answer.body.answer).not.toMatch(/#|Fuel dock \[\d+\]/);
    expect(answer.body.answer).toContain('The fuel dock opens at six');
  });
});
