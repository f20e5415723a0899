/**
 * The `embed-passages` job: the background embedding of stored passages with the built-in lexical embedder. The
 * background embedding worker reads the claimed passages' texts on its own connection to the search index's
 * SQLite database file, embeds them, counts their tokens (o200k, for the key's usage record) and hands the vectors
 * back as one transferred Float32Array. Sent over as texts (to the worker and to the tokenizer thread), a 10 MB
 * upload's 11,000 passages cost the event loop about a second of structured cloning, taken from chat calls
 * (bench/README.md, issue 34); this way a round sends ids and takes back one buffer.
 *
 * The worker only reads (a WAL reader blocks no writer). The vectors are written by the main thread's connection
 * (storeVectors, ~0.4 ms a round): a write here would hold the write lock from a thread at niceness 19, which the
 * busy event loop preempts mid-transaction, and the loop's own next write (a usage record) would then sleep in
 * SQLite's busy handler until this thread got the CPU back to commit — a priority inversion measured with strace
 * as the event loop asleep up to 25 ms at a time.
 */
import { encoderJobs } from '../../tokens/encoder-jobs.js';
import { indexConnection } from '../text/index-connection.js';
import { lexicalEmbed } from './lexical-embed.js';

export interface EmbedPassagesInput {
  /** The SQLite database file holding the search index (never `:memory:`: another connection would not see it). */
  database: string;
  ids: number[];
  dimensions: number;
}

export interface EmbeddedPassages {
  /** The passages found, in id order (fewer than asked when some were removed meanwhile). */
  ids: number[];
  /** Their vectors, `dimensions` floats each, one after the other. */
  vectors: Float32Array;
  /** Their o200k tokens, as `local:embed` counts `prompt_tokens`. */
  tokens: number;
}

export async function embedPassages(input: EmbedPassagesInput): Promise<EmbeddedPassages> {
  const rows = indexConnection(input.database)
    .prepare('SELECT id, title, body FROM search_passages WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id')
    .all(JSON.stringify(input.ids)) as Array<{ id: number; title: string; body: string }>;
  // The text the generic path embeds too (search-index.ts): the file's name, then the passage.
  const texts = rows.map((row) => `${row.title}\n${row.body}`);
  const vectors = new Float32Array(rows.length * input.dimensions);
  lexicalEmbed({ inputs: texts, dimensions: input.dimensions }).forEach((vector, index) => {
    vectors.set(vector, index * input.dimensions);
  });
  const { countedTokens } = await encoderJobs.count({ texts, budgetChars: Number.POSITIVE_INFINITY });
  return { ids: rows.map((row) => row.id), vectors, tokens: countedTokens };
}
