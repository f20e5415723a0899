/**
 * The `embed-passages` job: the background embedding of stored passages with the built-in lexical embedder, done
 * whole by the background embedding worker on its own connection to the search index's SQLite database file. The
 * main thread claims the passages and sends their ids; the worker reads their texts, embeds them, counts their
 * tokens (o200k, for the key's usage record) and writes the vectors, dropping each claim as its vector is stored.
 * Sent over as texts and vectors, a 10 MB upload's 11,000 passages cost the event loop about a second of
 * structured cloning and vector writes, taken from chat calls (bench/README.md, issue 34); this way it learns two
 * numbers a batch.
 *
 * A passage removed between its claim and its vector gets none (STORE_VECTOR_SQL). The write is one short
 * IMMEDIATE transaction a batch (25 passages: well under a millisecond), so the main connection's writers wait
 * for the write lock at most that long.
 */
import { encoderJobs } from '../../tokens/encoder-jobs.js';
import { indexConnection } from '../text/index-connection.js';
import { RELEASE_CLAIM_SQL, STORE_VECTOR_SQL, vectorBytes } from '../text/passage-sql.js';
import { lexicalEmbed } from './lexical-embed.js';

export interface EmbedPassagesInput {
  /** The SQLite database file holding the search index (never `:memory:`: another connection would not see it). */
  database: string;
  /** The embedding model's id, stored with each vector (a change of model re-embeds). */
  model: string;
  ids: number[];
  dimensions: number;
}

export interface EmbeddedPassages {
  /** Passages that got a vector (fewer than asked when some were removed meanwhile). */
  stored: number;
  /** Their o200k tokens, as `local:embed` counts `prompt_tokens`. */
  tokens: number;
}

export async function embedPassages(input: EmbedPassagesInput): Promise<EmbeddedPassages> {
  const db = indexConnection(input.database);
  const rows = db
    .prepare(`SELECT id, title, body FROM search_passages WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id`)
    .all(JSON.stringify(input.ids)) as Array<{ id: number; title: string; body: string }>;
  // The text the generic path embeds too (search-index.ts): the file's name, then the passage.
  const texts = rows.map((row) => `${row.title}\n${row.body}`);
  const vectors = lexicalEmbed({ inputs: texts, dimensions: input.dimensions });
  const { countedTokens } = await encoderJobs.count({ texts, budgetChars: Number.POSITIVE_INFINITY });
  const store = db.prepare(STORE_VECTOR_SQL);
  const release = db.prepare(RELEASE_CLAIM_SQL);
  const write = db.transaction(() => {
    let stored = 0;
    rows.forEach((row, index) => {
      stored += store.run({ id: row.id, model: input.model, vector: vectorBytes(vectors[index]!) }).changes;
    });
    // Every claim of the batch, a removed passage's too (its claim row went with it; this is a no-op then).
    for (const id of input.ids) {
      release.run(id);
    }
    return stored;
  });
  return { stored: write.immediate(), tokens: countedTokens };
}
