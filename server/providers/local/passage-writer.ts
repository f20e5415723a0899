/**
 * The paced passage writer: a file's passages written by the main thread, as the extraction worker's parts
 * arrive, APPEND_SLICE at a time with a pause between. It serves the passage stores the extraction worker cannot
 * write itself (engines/text/index-passages.ts): PostgreSQL, whose full-text work is the server's and whose
 * writes cost the event loop only their sending, and an in-memory SQLite database (tests), which no other
 * connection can open.
 */
import type { IndexedFile, PassageStore } from '../../storage/passage-store.js';

/**
 * Passages written per statement, with a pause of APPEND_PAUSE_MS after each. SQLite's full-text insert costs
 * ~80 µs per 1,000-character passage on the event loop; a chat call takes several loop turns (request, upstream
 * answer, response), and with a slice after every turn (setImmediate) each of them paid for one: at 25 a slice
 * (2 ms) that stretched the slowest chat calls by 10–20 ms while a 10 MB file was written (bench/README.md,
 * embeddings). At 4 a slice costs ~0.3 ms, and the pause (a timer, not the next turn) lets the turns of that
 * millisecond run without any.
 */
export const APPEND_SLICE = 4;
/** The pause between two slices of a file's passages (see APPEND_SLICE). */
export const APPEND_PAUSE_MS = 1;
const appendPause = () => new Promise<void>((resolve) => setTimeout(resolve, APPEND_PAUSE_MS));

export interface PassageWriter {
  /** Whether writing began (the file's old passages were removed). */
  readonly started: boolean;
  add(part: string[]): void;
  /**
   * Resolves when every passage added is written (or the writing was stopped); a file without passages still
   * has its old ones removed.
   */
  end(): Promise<void>;
  /** Stops the writing and removes what it wrote. */
  discard(): Promise<void>;
}

/**
 * Writes the file's passages in place of what was indexed for it as they are added: searches see the file's
 * passages grow meanwhile. It starts (removing the file's old passages) at the first `add` while `current()`
 * holds (this `add` of the file is the latest, the index is open), and stops once it does not.
 */
export function createPassageWriter(
  passages: PassageStore,
  file: IndexedFile,
  at: number,
  current: () => boolean,
): PassageWriter {
  const texts: string[] = [];
  let ended = false;
  let wake: (() => void) | undefined;
  let writing: Promise<void> | undefined;
  async function write(): Promise<void> {
    await passages.remove(file.fileId);
    for (let start = 0; ; start += APPEND_SLICE) {
      while (start >= texts.length && !ended) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
      if (start >= texts.length || !current()) {
        return;
      }
      await passages.append(file, texts.slice(start, start + APPEND_SLICE), start, at);
      await appendPause();
    }
  }
  const begin = () => {
    if (!writing && current()) {
      writing = write();
      // Seen by `end` or `discard`; not left unhandled meanwhile.
      writing.catch(() => undefined);
    }
  };
  const nudge = () => {
    const resolve = wake;
    wake = undefined;
    resolve?.();
  };
  return {
    get started() {
      return writing !== undefined;
    },
    add(part) {
      for (const text of part) {
        texts.push(text);
      }
      if (texts.length > 0) {
        begin();
      }
      nudge();
    },
    async end() {
      ended = true;
      begin();
      nudge();
      await writing;
    },
    async discard() {
      ended = true;
      texts.length = 0;
      nudge();
      if (writing) {
        await writing.catch(() => undefined);
        await passages.remove(file.fileId);
      }
    },
  };
}
