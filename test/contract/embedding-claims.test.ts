/**
 * Semantic file search's background embedding under several processes: two Omnigate instances (separate
 * processes, as the workers of `--workers N` are) on one SQLite file, and on one PostgreSQL database, each
 * indexing uploads of its own while a slow fake upstream embeds. Every passage reaches the upstream exactly once:
 * each batch is claimed in the database before it is embedded, so neither process embeds what the other holds.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { sendJson } from '../fakes/answers.js';
import { startFakeUpstream, type FakeUpstream } from '../fakes/fake-upstream.js';
import { eventually } from '../helpers/child-processes.js';
import { startInstances } from '../helpers/instances.js';
import { createTestDatabase, postgresAvailable } from '../helpers/postgres.js';
import { dataDir, killServers } from '../helpers/spawn-server.js';

const TEST_TIMEOUT_MS = 240_000;
const KEY = 'og-embed-claims-test-Hq7Zp2Lx9Vr4Nc8T';
/** Long enough that the other process's round starts while this one's batch is still at the upstream. */
const UPSTREAM_DELAY_MS = 400;
const FILES_PER_INSTANCE = 3;

let upstream: FakeUpstream | undefined;
afterEach(async () => {
  killServers();
  await upstream?.close();
  upstream = undefined;
});

/** Each text sent to the upstream, as many times as it was sent. */
async function slowEmbedder(): Promise<{ upstream: FakeUpstream; inputs: string[] }> {
  const inputs: string[] = [];
  const started = await startFakeUpstream(async (recorded, res) => {
    const { input } = recorded.body as { input: string[] };
    inputs.push(...input);
    await new Promise((resolve) => setTimeout(resolve, UPSTREAM_DELAY_MS));
    sendJson(
      res,
      200,
      JSON.stringify({
        object: 'list',
        data: input.map((_, index) => ({ object: 'embedding', index, embedding: [1, index % 7, 0.5] })),
        model: 'vec',
        usage: { prompt_tokens: input.length, total_tokens: input.length },
      }),
    );
  });
  return { upstream: started, inputs };
}

/** About three passages of ~1,000 characters, every one distinct. */
function fileText(name: string): string {
  return Array.from({ length: 45 }, (_, line) => `${name} line ${line} of the logbook: the tide turned at ${line}.`)
    .join('\n')
    .slice(0, 2_800);
}

async function runTwoInstances(
  dir: string,
  shared: Record<string, string>,
  counts: () => Promise<{ passages: number; vectors: number }>,
) {
  const embedder = await slowEmbedder();
  upstream = embedder.upstream;
  const config = path.join(dir, 'omnigate.yaml');
  writeFileSync(
    config,
    `providers:\n  up:\n    type: openai-compatible\n    base_url: ${embedder.upstream.origin}/v1\nmodels:\n  - { provider: up, model: vec, type: embedding }\nsearch:\n  embedding_model: up:vec\n`,
  );
  const instances = await startInstances({
    sharedDataDir: dir,
    shared: { ...shared, OMNIGATE_CONFIG: config, OMNIGATE_API_KEYS: KEY },
  });
  const uploads = instances.flatMap((instance) =>
    Array.from({ length: FILES_PER_INSTANCE }, (_, index) =>
      instance.upload(
        KEY,
        { name: `${instance.name}-${index}.txt`, type: 'text/plain', data: fileText(`${instance.name}${index}`) },
        { purpose: 'user_data' },
      ),
    ),
  );
  const answers = await Promise.all(uploads);
  expect(answers.map((answer) => answer.status)).toEqual(Array(answers.length).fill(200));
  const done = await eventually(async () => {
    const { passages, vectors } = await counts();
    return passages >= FILES_PER_INSTANCE * 2 * 2 && vectors === passages;
  }, 120_000);
  expect(done).toBe(true);
  const { passages } = await counts();
  // Every passage sent once: no duplicates, none missing.
  expect(new Set(embedder.inputs).size).toBe(passages);
  expect(embedder.inputs).toHaveLength(passages);
}

describe('background embedding across processes', () => {
  it(
    'embeds each passage once with two instances on one SQLite file',
    async () => {
      const dir = dataDir();
      await runTwoInstances(dir, {}, async () => {
        const db = new Database(path.join(dir, 'omnigate.sqlite'), { readonly: true });
        try {
          const passages = (db.prepare('SELECT count(*) AS n FROM search_passages').get() as { n: number }).n;
          const vectors = (db.prepare('SELECT count(*) AS n FROM search_passage_vectors').get() as { n: number }).n;
          return { passages, vectors };
        } finally {
          db.close();
        }
      });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'embeds each passage once with two instances on one PostgreSQL database',
    async (context) => {
      if (!(await postgresAvailable())) {
        context.skip('no PostgreSQL server');
      }
      const database = await createTestDatabase();
      const client = new pg.Client({ connectionString: database.url });
      let connected: Promise<unknown> | undefined;
      try {
        const dir = dataDir();
        await runTwoInstances(dir, { OMNIGATE_DATABASE_URL: database.url }, async () => {
          // Connected once the instances have migrated the database.
          await (connected ??= client.connect());
          const { rows } = await client.query<{ passages: string; vectors: string }>(
            `SELECT (SELECT count(*) FROM search_passages) AS passages,
                    (SELECT count(*) FROM search_passage_vectors) AS vectors`,
          );
          return { passages: Number(rows[0]!.passages), vectors: Number(rows[0]!.vectors) };
        });
      } finally {
        killServers();
        await client.end().catch(() => undefined);
        await database.drop();
      }
    },
    TEST_TIMEOUT_MS,
  );
});
