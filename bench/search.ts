/**
 * The search part of `npm run bench`: `local:search` latency (p50/p99) over a corpus of a few thousand
 * passages, measured at the index (FTS5 MATCH + bm25 + snippet + the per-file pick), in process: an HTTP
 * round trip would measure Express (see the chat rows for that), not the index. The corpus is
 * generated (seeded) text spread over one key's files, plus another key's files the search must skip.
 */
import { openDatabase } from '../server/storage/database.js';
import { createPassageStore } from '../server/storage/passage-store.js';
import { createLocalSearchIndex } from '../server/providers/local/search-index.js';
import { splitIntoPassages } from '../server/engines/text/passages.js';
import { percentile } from './percentile.js';

const WORDS = (
  'lighthouse keeper lamp lens harbour fog signal tide chart compass anchor sail mast rope knot storm gale wave ' +
  'reef shoal beacon island coast cliff gull ferry engine boiler coal ledger cargo manifest customs port quay ' +
  'pier dock crane winch barrel salt cod herring net trawler dinghy oar rudder keel hull deck cabin galley bunk'
).split(' ');

function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

export interface SearchBenchResult {
  passages: number;
  files: number;
  indexMs: number;
  queries: number;
  p50Ms: number;
  p99Ms: number;
}

export async function benchSearch(
  options: { files?: number; paragraphsPerFile?: number; queries?: number } = {},
): Promise<SearchBenchResult> {
  const files = options.files ?? 400;
  const paragraphs = options.paragraphsPerFile ?? 24;
  const queryCount = options.queries ?? 2_000;
  const random = seeded(42);
  // A vocabulary of a few thousand words used with a Zipf-like skew, as in prose: a handful of words are in
  // most passages, most words in few. (A small flat vocabulary would make every query match every passage.)
  const syllables = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'vo', 'ze', 'pa', 'qu', 'el', 'or', 'an', 'is'];
  const vocabulary = [...WORDS];
  while (vocabulary.length < 5_000) {
    vocabulary.push(
      Array.from(
        { length: 2 + Math.floor(random() * 3) },
        () => syllables[Math.floor(random() * syllables.length)],
      ).join(''),
    );
  }
  const word = () => vocabulary[Math.floor(vocabulary.length * random() ** 3)]!;
  const sentence = () => `${Array.from({ length: 8 + Math.floor(random() * 12) }, word).join(' ')}.`;
  const db = openDatabase(':memory:');
  const passages = createPassageStore(db);
  const index = createLocalSearchIndex({ passages });
  const started = performance.now();
  for (let file = 0; file < files; file++) {
    const text = Array.from({ length: paragraphs }, () => Array.from({ length: 3 }, sentence).join(' ')).join('\n\n');
    // Every fifth file belongs to another key: the search must filter it out, as in a shared server.
    await passages.replace(
      { fileId: `file_${file}`, keyId: file % 5 === 0 ? 'key_other' : 'key_bench', title: `notes-${file}.md` },
      splitIntoPassages(text),
      Date.now(),
    );
  }
  const indexMs = performance.now() - started;
  const timings: number[] = [];
  for (let query = 0; query < queryCount; query++) {
    const text = Array.from({ length: 1 + Math.floor(random() * 4) }, word).join(' ');
    const begin = performance.now();
    await index.search({ keyId: 'key_bench', query: text, maxResults: 10 });
    timings.push(performance.now() - begin);
  }
  timings.sort((a, b) => a - b);
  const total = (await passages.count('key_bench')) + (await passages.count('key_other'));
  await index.close();
  db.close();
  const round = (ms: number) => Math.round(ms * 1000) / 1000;
  return {
    passages: total,
    files,
    indexMs: Math.round(indexMs),
    queries: queryCount,
    p50Ms: round(percentile(timings, 50)),
    p99Ms: round(percentile(timings, 99)),
  };
}
