/**
 * The `index-passages` job: a stored file's text extracted and cut into passages (extract-passages.ts) and
 * written into the search index by the extraction worker itself, on its own connection to the SQLite database
 * file. SQLite's full-text insert costs ~80 µs a passage, 1–1.8 s of CPU for a 10 MB file; on the main thread,
 * however finely sliced, that CPU was taken from chat calls (bench/README.md, issue 34). Here it runs at the
 * worker's niceness, and the main thread learns only how many passages were written.
 *
 * The writes are short transactions of TRANSACTION_PASSAGES, each followed by a pause PAUSE_PER_WRITE times as
 * long as it took (at least MIN_PAUSE_MS), so the worker holds the write lock at most a fifth of the time. WAL lets
 * the main thread read meanwhile, but its own writes (usage, claims, files) that meet the lock wait in SQLite's
 * busy handler, which *sleeps the event loop* (1, 2, 5, 10, 15, 20, 25… ms, retrying between sleeps): with a
 * pause as short as the transaction, a retry met the next transaction half the time, and under chat load the
 * main thread slept 0.4 s per 10 MB upload, once 25 ms at a stretch (strace, bench/README.md issue 34). The
 * first transaction removes what was indexed for the file before.
 *
 * `cancel` is shared memory the main thread sets when the file is removed or added again (or the server
 * closes). It is read inside each transaction, after the write lock is taken: the main thread sets it before it
 * deletes the file's passages, so either this transaction committed before that delete (which then removes its
 * rows), or it sees the flag and writes nothing. No passage of a removed file outlives its removal.
 */
import { type ExtractedPassages, extractPassages } from './extract-passages.js';
import type { ExtractTextInput } from './extract-text.js';
import { foregroundCount } from '../pool/foreground.js';
import { indexConnection } from './index-connection.js';
import { DELETE_FILE_PASSAGES_SQL, INSERT_PASSAGE_SQL } from './passage-sql.js';

/** ~80 µs each: a transaction holds the write lock for about a millisecond. */
export const TRANSACTION_PASSAGES = 12;
/** The write lock is free at least four times as long as it was held, so a waiting writer on the main thread gets it. */
export const PAUSE_PER_WRITE = 4;
/**
 * While requests arrive (engines/pool/foreground.ts), the pause is this many times the write instead: the writer
 * then takes about a seventeenth of the time, and chat beside it was not measurably slower (bench/README.md).
 */
export const PAUSE_PER_WRITE_WHILE_SERVING = 16;

/** How long to pause after a write that took `heldMs`, given whether requests arrived since the last one. */
export function pauseAfterWrite(heldMs: number, serving: boolean): number {
  return Math.max(MIN_PAUSE_MS, (serving ? PAUSE_PER_WRITE_WHILE_SERVING : PAUSE_PER_WRITE) * heldMs);
}
const MIN_PAUSE_MS = 1;

export interface IndexPassagesInput extends ExtractTextInput {
  /** The SQLite database file holding `search_passages` (never `:memory:`: another connection would not see it). */
  database: string;
  file: { fileId: string; keyId: string; title: string };
  indexedAt: number;
  /** One Int32 over a SharedArrayBuffer: non-zero stops the writing (see the module comment). */
  cancel: Int32Array;
  /** The main thread's count of requests started (engines/pool/foreground.ts): while it moves, writes are paced slower. */
  foreground: Int32Array;
}

/** What was written, or why nothing was (as extract-passages.ts says it). */
export type IndexedPassages =
  | { written: number; truncated?: boolean; cancelled?: boolean }
  | Exclude<ExtractedPassages, { passages: string[] }>;

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function indexPassages(input: IndexPassagesInput): Promise<IndexedPassages> {
  const extracted = await extractPassages(input);
  if ('refused' in extracted) {
    return extracted;
  }
  const { passages } = extracted;
  const truncated = extracted.truncated ? { truncated: true } : {};
  const db = indexConnection(input.database);
  const insert = db.prepare(INSERT_PASSAGE_SQL);
  const removeOld = db.prepare(DELETE_FILE_PASSAGES_SQL);
  const { fileId, keyId, title } = input.file;
  const cancelled = () => Atomics.load(input.cancel, 0) !== 0;
  const write = db.transaction((start: number): boolean => {
    if (cancelled()) {
      return false;
    }
    if (start === 0) {
      removeOld.run(fileId);
    }
    const end = Math.min(passages.length, start + TRANSACTION_PASSAGES);
    for (let seq = start; seq < end; seq++) {
      insert.run({ fileId, keyId, seq, title, body: passages[seq], indexedAt: input.indexedAt });
    }
    return true;
  });
  // A file without passages still has its old ones removed (the loop's one pass at 0).
  let requests = foregroundCount(input.foreground);
  for (let start = 0; start === 0 || start < passages.length; start += TRANSACTION_PASSAGES) {
    // IMMEDIATE: the write lock before the flag is read (see the module comment).
    const began = performance.now();
    if (!write.immediate(start)) {
      return { written: start, cancelled: true, ...truncated };
    }
    const held = performance.now() - began;
    const seen = requests;
    requests = foregroundCount(input.foreground);
    await pause(pauseAfterWrite(held, requests !== seen));
  }
  return { written: passages.length, ...truncated };
}
