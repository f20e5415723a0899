/**
 * OpenAI's o200k_base encoder from the gpt-tokenizer package, for the tokenizer thread (encoder-jobs.ts) only.
 *
 * Its ranks come from the JSON file the build writes beside this module (scripts/token-ranks.mjs): parsing JSON
 * leaves the thread about 30 MiB smaller than compiling the package's 2.4 MB module of array literals, with the
 * same ranks. When the file is missing (the sources run without a build) or was saved from another version of
 * the package, the package's own module is used: the counts are the same either way, only the memory differs.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { GptEncoding } from 'gpt-tokenizer/GptEncoding';

const RANKS_FILE = new URL('./o200k_base.ranks.json', import.meta.url);

interface SavedRanks {
  package: string;
  ranks: Array<string | number[]>;
}

function installedPackage(): string {
  return `gpt-tokenizer@${(createRequire(import.meta.url)('gpt-tokenizer/package.json') as { version: string }).version}`;
}

async function savedRanks(file: URL): Promise<SavedRanks['ranks'] | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
  const saved = JSON.parse(text) as SavedRanks;
  return saved.package === installedPackage() ? saved.ranks : undefined;
}

/** The encoder; `ranksFile` is for tests. */
export async function loadO200kEncoder(ranksFile: URL = RANKS_FILE): Promise<GptEncoding> {
  const ranks = (await savedRanks(ranksFile)) ?? (await import('gpt-tokenizer/bpeRanks/o200k_base')).default;
  return GptEncoding.getEncodingApi('o200k_base', () => ranks);
}
