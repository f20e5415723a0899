/**
 * The local search index behind `local:search`, and the `FileIndex` file storage calls: a stored file's text
 * is extracted and cut into ~1,000-character passages in a worker (`extract-passages` job: pdf.js, html-to-text,
 * passages.ts), and the passages are written to the passage store APPEND_SLICE at a time, the event loop free
 * for APPEND_PAUSE_MS between slices (a 10 MB file is ten thousand passages); a deleted file's passages are dropped. Indexing never throws to its caller: it
 * resolves with the file's final state (`indexed`, or `failed`/`not_indexed` with the reason), which file storage
 * records on the file. Extraction is bounded by `ExtractionLimits` (pages, decompressed bytes, characters, a time
 * budget; engines/text/extract-text.ts) and, for one page that never yields, by the pool's job timeout.
 *
 * Extraction has its own pool instance (one worker, a long queue served round-robin across keys, a cap per key, a
 * 256 MB heap) rather than the media pool: uploads are background work, and a media pool busy with renders would
 * refuse them with 429 and leave files unindexed. Its worker runs at niceness 10 (EXTRACTION_NICENESS), below the
 * event loop, so a long parse takes the CPU chat calls leave over rather than half of it.
 * The worker exits after a minute idle, so a server that never indexes never holds one.
 *
 * Text past `ExtractionLimits.maxCharacters` (OMNIGATE_INDEX_MAX_CHARACTERS) is not indexed: the file is
 * `indexed` with code `truncated` and a reason saying how much was kept.
 */
import type { Readable } from 'node:stream';
import { DEFAULT_EXTRACTION_PER_KEY } from '../../config.js';
import { ApiError } from '../../core/api-error.js';
import type { FileIndex, FileIndexState, FileText, IndexableFile } from '../../core/file-index.js';
import { createMediaPool, type MediaPool } from '../../engines/media-pool.js';
import type { ExtractedPassages } from '../../engines/text/extract-passages.js';
import { DEFAULT_EXTRACTION_LIMITS, type ExtractionLimits } from '../../engines/text/extract-text.js';
import { safeMatchExpression } from '../../engines/text/safe-match.js';
import { textKindOf } from '../../engines/text/text-kind.js';
import type { PassageHit, PassageStore } from '../../storage/passage-store.js';
import type { ProviderLogger } from '../provider-logger.js';

export interface LocalSearchIndex extends FileIndex {
  text(file: IndexableFile, signal: AbortSignal): Promise<FileText>;
  /** The key's passages best matching the query, at most one per file, best first. */
  search(query: { keyId: string; query: string; maxResults: number; indexedAfter?: number }): Promise<PassageHit[]>;
  /** The key's files whose `add` has not finished: their text is not searched yet. */
  pending(keyId: string): number;
  /** The ids of the files whose `add` (queued or extracting) has not finished, every key's: their leases are renewed. */
  inFlight(): string[];
  /**
   * Turns on semantic search (`search.embedding_model`): passages get vectors of this model in the background, and
   * searches rank by reciprocal rank fusion of full-text and vector similarity. Passages with another model's
   * vector (or none) are embedded again from now on.
   */
  useEmbedder(embedder: PassageEmbedder): void;
  /** Resolves when every `add` started so far has finished (tests, shutdown). */
  idle(): Promise<void>;
  close(): Promise<void>;
}

/** The embedding model of semantic search, as the index uses it. */
export interface PassageEmbedder {
  /** The model's id: stored with each vector, so a change of model is seen. */
  model: string;
  /** One vector per text, in order; `owner` is the key a query embeds for. */
  embed(texts: string[], signal: AbortSignal, owner?: string): Promise<number[][]>;
  /**
   * The background embedding of one key's passages: one vector per text, in order, recorded as that key's usage
   * (and counted by its limits) by whoever builds the embedder.
   */
  embedPassages(texts: string[], signal: AbortSignal, keyId: string): Promise<number[][]>;
}

/**
 * Passages claimed per round of the background embedding (one embedding call per key among them). Each batch is a
 * short synchronous stretch on the event loop (the claim, the vectors' store, the structured clone from the
 * worker); between batches the loop takes a turn (setImmediate), so a chat call arriving meanwhile waits for one
 * batch, not for a whole file.
 */
export const WRITE_BATCH = 25;
/**
 * Passages written per statement when a file is indexed, with a pause of APPEND_PAUSE_MS after each. SQLite's
 * full-text insert costs ~80 µs per 1,000-character passage on the event loop; a chat call takes several loop
 * turns (request, upstream answer, response), and with a slice after every turn (setImmediate) each of them paid
 * for one: at 25 a slice (2 ms) that stretched the slowest chat calls by 10–20 ms while a 10 MB file was written
 * (bench/README.md, embeddings). At 4 a slice costs ~0.3 ms, and the pause (a timer, not the next turn) lets the
 * turns of that millisecond run without any: the writing takes at most about a quarter of a busy event loop.
 */
export const APPEND_SLICE = 4;
/** The pause between two slices of a file's passages (see APPEND_SLICE); ~3 s for a 10 MB file's 11,000. */
export const APPEND_PAUSE_MS = 1;
const appendPause = () => new Promise<void>((resolve) => setTimeout(resolve, APPEND_PAUSE_MS));
/** The extraction worker's niceness (worker-pool.ts): below the event loop's 0, above background embedding's 19. */
export const EXTRACTION_NICENESS = 10;
/** One turn of the event loop: the I/O callbacks (chat requests) waiting now run before the next batch. */
const loopTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
/**
 * How long a claim on passages to embed lives (passage-store.ts `claimUnembedded`): far longer than one batch's
 * call takes; a process that dies holding one leaves its passages to the next round after it.
 */
export const EMBED_CLAIM_MS = 5 * 60_000;
/** A file's passages as the extraction worker cut them, or why there are none (as `FileText` says it). */
type FilePassages = ExtractedPassages | Extract<FileText, { refused: string }>;
/** Reciprocal rank fusion's constant (Cormack et al.): a rank's weight is 1 / (RRF_K + rank). */
const RRF_K = 60;

/**
 * Reciprocal rank fusion of full-text and vector hits, per file (a file's best passage in each list counts):
 * a file found by both ranks above one found by either alone at the same rank. The hit kept is the full-text one
 * when there is one (its snippet shows the matched words); its score becomes the fused score.
 */
export function fuseByRank(lists: PassageHit[][]): PassageHit[] {
  const fused = new Map<string, { hit: PassageHit; score: number }>();
  for (const list of lists) {
    const seen = new Set<string>();
    for (const hit of list) {
      if (seen.has(hit.fileId)) {
        continue;
      }
      seen.add(hit.fileId);
      const weight = 1 / (RRF_K + seen.size);
      const entry = fused.get(hit.fileId);
      if (entry) {
        entry.score += weight;
      } else {
        fused.set(hit.fileId, { hit, score: weight });
      }
    }
  }
  return [...fused.values()].sort((a, b) => b.score - a.score).map(({ hit, score }) => ({ ...hit, score }));
}

export interface LocalSearchIndexOptions {
  passages: PassageStore;
  logger?: ProviderLogger & { info?(object: Record<string, unknown>, message: string): void };
  /** Defaults to a one-worker pool of its own. */
  pool?: MediaPool;
  /** Extractions one key may have queued or running in that pool (`OMNIGATE_EXTRACTION_QUEUE_PER_KEY`); the next is a 429. */
  perKeyLimit?: number;
  /** Larger files are not indexed (their text would not fit a passage budget anyway). */
  maxFileBytes?: number;
  /** Caps of one extraction; `DEFAULT_EXTRACTION_LIMITS` when absent. */
  limits?: ExtractionLimits;
  now?: () => number;
}

export const DEFAULT_MAX_INDEXED_FILE_BYTES = 64 * 1024 * 1024;
/** The extraction worker's heap: a parse that needs more is refused as too large and the worker replaced. */
const EXTRACTION_HEAP_MB = 256;
/**
 * The hard stop of one extraction (the worker is terminated): the time budget is checked between pages, and this
 * catches the one page whose parse never returns. pdf.js parses a 20-page PDF in under a second.
 */
const EXTRACTION_TIMEOUT_MS = 20_000;
/** Candidate passages read per result wanted, so that dropping a file's second-best passages still fills the page. */
const CANDIDATES_PER_RESULT = 4;

async function readAll(stream: Readable, limit: number): Promise<Uint8Array | undefined> {
  const pieces: Buffer[] = [];
  let size = 0;
  for await (const piece of stream) {
    const buffer = Buffer.isBuffer(piece) ? piece : Buffer.from(piece as Uint8Array);
    size += buffer.length;
    if (size > limit) {
      stream.destroy();
      return undefined;
    }
    pieces.push(buffer);
  }
  // A view of the joined bytes, not a copy of them: a 10 MB file was copied once more on the event loop.
  const whole = Buffer.concat(pieces);
  return new Uint8Array(whole.buffer, whole.byteOffset, whole.length);
}

export function createLocalSearchIndex(options: LocalSearchIndexOptions): LocalSearchIndex {
  const { passages, logger } = options;
  const pool =
    options.pool ??
    createMediaPool({
      workers: 1,
      queueLimit: 10_000,
      perKeyLimit: options.perKeyLimit ?? DEFAULT_EXTRACTION_PER_KEY,
      jobTimeoutMs: EXTRACTION_TIMEOUT_MS,
      heapMb: EXTRACTION_HEAP_MB,
      niceness: EXTRACTION_NICENESS,
    });
  const ownsPool = options.pool === undefined;
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_INDEXED_FILE_BYTES;
  const limits = options.limits ?? DEFAULT_EXTRACTION_LIMITS;
  const tooLarge = () => ({
    refused: 'too_large' as const,
    reason: `The file is larger than the ${maxFileBytes} bytes the search index reads.`,
  });
  const now = options.now ?? Date.now;
  const closing = new AbortController();
  /** The latest `add` of each file; a `remove` (or a newer `add`) while one runs makes its result stale. */
  const generations = new Map<string, number>();
  const running = new Set<Promise<unknown>>();
  /** Unfinished `add`s per key, for `pending`. */
  const pendingByKey = new Map<string, number>();
  /** Unfinished `add`s per file, for `inFlight`. */
  const addsByFile = new Map<string, number>();
  let generation = 0;
  let embedder: PassageEmbedder | undefined;
  /** The background embedding running now, and whether more passages arrived while it ran. */
  let embedding: Promise<void> | undefined;
  let embedAgain = false;

  /** Embeds every passage lacking a vector of the current model, a batch at a time, one run at a time. */
  function embedPending(): void {
    if (!embedder) {
      return;
    }
    if (embedding) {
      embedAgain = true;
      return;
    }
    const current = embedder;
    embedding = (async () => {
      do {
        embedAgain = false;
        // The cursor: each claim starts after the last passage claimed, so a file's ten thousand passages are
        // not scanned again from the first at every batch. Once it runs dry, one claim from the start picks up
        // what was passed over (a released claim, an expired one); only when that is empty too is the run done.
        let cursor = 0;
        for (;;) {
          if (closing.signal.aborted || embedder !== current) {
            return;
          }
          // Claimed, not just read: another worker or instance running this loop takes other passages. An
          // empty claim while passages wait means others hold them; their rounds embed them.
          const at = now();
          const batch = await passages.claimUnembedded(current.model, WRITE_BATCH, at, at + EMBED_CLAIM_MS, cursor);
          if (batch.length === 0) {
            if (cursor === 0) {
              break;
            }
            cursor = 0;
            continue;
          }
          cursor = batch[batch.length - 1]!.id;
          const byKey = new Map<string, typeof batch>();
          for (const passage of batch) {
            byKey.set(passage.keyId, [...(byKey.get(passage.keyId) ?? []), passage]);
          }
          try {
            // One call per key: each key's usage record (and limits) counts exactly its own passages.
            for (const [keyId, owned] of byKey) {
              const vectors = await current.embedPassages(
                owned.map((passage) => `${passage.title}\n${passage.text}`),
                closing.signal,
                keyId,
              );
              if (vectors.length !== owned.length) {
                throw new Error(`${current.model} answered ${vectors.length} vectors for ${owned.length} passages`);
              }
              await passages.storeVectors(
                current.model,
                owned.map((passage, index) => ({ id: passage.id, vector: vectors[index]! })),
              );
            }
          } catch (error) {
            // What was not stored is free again at once for the next round (an upload, or a start).
            await passages.releaseClaims(batch.map((passage) => passage.id)).catch(() => undefined);
            throw error;
          }
          await loopTurn();
        }
      } while (embedAgain);
    })()
      .catch((error: unknown) => {
        // Tried again at the next upload (or start); full-text search goes on meanwhile.
        logger?.warn({ err: error, model: current.model }, 'embedding passages for semantic search failed');
      })
      .finally(() => {
        embedding = undefined;
      });
  }

  /**
   * What `add` indexes (`extract-passages`: the text already cut into passages) and `text` answers
   * (`extract-text`): the same extraction, so `read_file` shows exactly what search reads.
   */
  async function extract(file: IndexableFile, signal: AbortSignal, job: 'extract-text'): Promise<FileText>;
  async function extract(
    file: IndexableFile,
    signal: AbortSignal,
    job: 'extract-passages',
    onPassages: (passages: string[]) => void,
  ): Promise<FilePassages>;
  async function extract(
    file: IndexableFile,
    signal: AbortSignal,
    job: 'extract-text' | 'extract-passages',
    onPassages?: (passages: string[]) => void,
  ): Promise<FileText | FilePassages> {
    const kind = textKindOf(file.mediaType, file.filename);
    if (!kind) {
      return { refused: 'not_text', reason: `A ${file.mediaType} file is not text.` };
    }
    if (file.bytes > maxFileBytes) {
      return tooLarge();
    }
    const bytes = await readAll(await file.open(), maxFileBytes);
    if (!bytes) {
      return tooLarge();
    }
    try {
      // The passages but the last PASSAGES_PER_MESSAGE arrive ahead of the result, in order (extract-passages.ts).
      const onPart = onPassages && ((part: unknown) => onPassages(part as string[]));
      return await pool.use(signal, (slot) => slot.run(job, { bytes, kind, limits }, onPart ? { onPart } : {}), {
        owner: file.keyId,
      });
    } catch (error) {
      if (error instanceof ApiError && error.code === 'engine_out_of_memory') {
        logger?.warn(
          { fileId: file.id, bytes: file.bytes, reason: error.message },
          'text extraction ran out of memory',
        );
        return {
          refused: 'too_large',
          reason: `Extracting the file's text needed more memory than the extraction worker may use (${EXTRACTION_HEAP_MB} MB).`,
        };
      }
      throw error;
    }
  }

  function admit(file: Pick<IndexableFile, 'mediaType' | 'filename' | 'bytes'>): FileIndexState {
    if (!textKindOf(file.mediaType, file.filename)) {
      return {
        status: 'not_indexed',
        code: 'not_text',
        reason: `A ${file.mediaType} file is not text; it is stored but not searchable.`,
      };
    }
    if (file.bytes > maxFileBytes) {
      return { status: 'failed', code: 'too_large', reason: tooLarge().reason };
    }
    return { status: 'indexing' };
  }

  /** Why an extraction that threw did not finish, as the file shows it. */
  function stoppedState(error: unknown): FileIndexState {
    const code = (error as { code?: unknown }).code;
    if (code === 'generation_timeout') {
      return {
        status: 'failed',
        code: 'time_budget',
        reason: `Extracting the file's text did not finish within ${EXTRACTION_TIMEOUT_MS} ms; the extraction was stopped.`,
      };
    }
    if (code === 'key_jobs_limit') {
      return {
        status: 'failed',
        code: 'key_jobs_limit',
        reason: `${(error as Error).message.slice(0, 300)} Upload it again later to index it.`,
      };
    }
    if (closing.signal.aborted) {
      return {
        status: 'failed',
        code: 'interrupted',
        reason: 'The server shut down while the file was being indexed; upload it again to index it.',
      };
    }
    // The worker died (its memory limit, a crash): it is replaced for the next file.
    return {
      status: 'failed',
      code: 'extraction_failed',
      reason: `Extracting the file's text failed: ${error instanceof Error ? error.message.slice(0, 200) : 'unknown error'}.`,
    };
  }

  async function index(file: IndexableFile, mine: number): Promise<FileIndexState> {
    const admitted = admit(file);
    if (admitted.status !== 'indexing') {
      return admitted;
    }
    // Written as the worker's parts arrive (a 10 MB file's first passages are searchable while the rest cross).
    const writer = passageWriter(file, mine);
    let extracted: FilePassages;
    try {
      extracted = await extract(file, closing.signal, 'extract-passages', (part) => writer.add(part));
    } catch (error) {
      // What the parts wrote of a file that then failed must not be searched.
      await writer.discard();
      logger?.warn({ fileId: file.id, err: error }, 'file not indexed for search');
      return stoppedState(error);
    }
    if ('refused' in extracted) {
      await writer.discard();
      logger?.warn({ fileId: file.id, bytes: file.bytes, refused: extracted.refused }, 'file not indexed for search');
      return {
        status: extracted.refused === 'not_text' ? 'not_indexed' : 'failed',
        code: extracted.refused,
        reason: extracted.reason,
      };
    }
    writer.add(extracted.passages);
    await writer.end();
    if (writer.started) {
      if (generations.get(file.id) !== mine) {
        // Removed (or added again) while the passages were written: a backend whose writes may overtake each
        // other must not keep this stale text, so it is removed once more; a newer add writes its own.
        await passages.remove(file.id);
      }
      embedPending();
    }
    if (extracted.truncated) {
      return {
        status: 'indexed',
        code: 'truncated',
        reason: `Only the first ${limits.maxCharacters} characters of the file's text are indexed (OMNIGATE_INDEX_MAX_CHARACTERS).`,
      };
    }
    return { status: 'indexed' };
  }

  /**
   * Writes the file's passages in place of what was indexed for it as they are added, APPEND_SLICE at a time with
   * a pause between: searches see the file's passages grow meanwhile. It starts (removing the file's old
   * passages) at the first `add` while this `add` of the file is the latest; a newer `add` or a `remove` stops it.
   */
  function passageWriter(file: IndexableFile, mine: number) {
    const indexed = { fileId: file.id, keyId: file.keyId, title: file.filename };
    const at = now();
    const texts: string[] = [];
    let ended = false;
    let wake: (() => void) | undefined;
    let writing: Promise<void> | undefined;
    const current = () => generations.get(file.id) === mine && !closing.signal.aborted;
    async function write(): Promise<void> {
      await passages.remove(file.id);
      for (let start = 0; ; start += APPEND_SLICE) {
        while (start >= texts.length && !ended) {
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
        }
        if (start >= texts.length || !current()) {
          return;
        }
        await passages.append(indexed, texts.slice(start, start + APPEND_SLICE), start, at);
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
      add(part: string[]) {
        for (const text of part) {
          texts.push(text);
        }
        if (texts.length > 0) {
          begin();
        }
        nudge();
      },
      /**
       * Resolves when every passage added is written (or the writing was stopped); a file without passages
       * still has its old ones removed.
       */
      async end() {
        ended = true;
        begin();
        nudge();
        await writing;
      },
      /** Stops the writing and removes what it wrote. */
      async discard() {
        ended = true;
        texts.length = 0;
        nudge();
        if (writing) {
          await writing.catch(() => undefined);
          await passages.remove(file.id);
        }
      },
    };
  }

  return {
    admit,
    add(file) {
      const mine = ++generation;
      generations.set(file.id, mine);
      pendingByKey.set(file.keyId, (pendingByKey.get(file.keyId) ?? 0) + 1);
      addsByFile.set(file.id, (addsByFile.get(file.id) ?? 0) + 1);
      const task = index(file, mine)
        .catch((error: unknown): FileIndexState => {
          logger?.warn({ fileId: file.id, err: error }, 'file not indexed for search');
          return { status: 'failed', code: 'extraction_failed', reason: 'Indexing the file failed.' };
        })
        .finally(() => {
          running.delete(task);
          const left = (pendingByKey.get(file.keyId) ?? 1) - 1;
          if (left > 0) {
            pendingByKey.set(file.keyId, left);
          } else {
            pendingByKey.delete(file.keyId);
          }
          const adds = (addsByFile.get(file.id) ?? 1) - 1;
          if (adds > 0) {
            addsByFile.set(file.id, adds);
          } else {
            addsByFile.delete(file.id);
          }
          if (generations.get(file.id) === mine) {
            generations.delete(file.id);
          }
        });
      running.add(task);
      return task;
    },
    pending(keyId) {
      return pendingByKey.get(keyId) ?? 0;
    },
    inFlight() {
      return [...addsByFile.keys()];
    },
    text(file, signal) {
      return extract(file, AbortSignal.any([closing.signal, signal]), 'extract-text');
    },
    async remove(fileId) {
      generations.set(fileId, ++generation);
      await passages.remove(fileId);
    },
    useEmbedder(next) {
      embedder = next;
      embedPending();
    },
    async search({ keyId, query, maxResults, indexedAfter }) {
      const match = safeMatchExpression(query);
      const limit = maxResults * CANDIDATES_PER_RESULT;
      let hits = match ? await passages.search({ keyId, match, limit }) : [];
      if (embedder && query.trim() !== '') {
        try {
          const [vector] = await embedder.embed([query], closing.signal, keyId);
          const near = await passages.nearest({ keyId, model: embedder.model, vector: vector ?? [], limit });
          hits = fuseByRank([hits, near]);
        } catch (error) {
          // The full-text ranking alone, rather than no answer.
          logger?.warn({ err: error, model: embedder.model }, 'semantic search failed; full-text results only');
        }
      }
      const best = new Map<string, PassageHit>();
      for (const hit of hits) {
        if (!best.has(hit.fileId) && (indexedAfter === undefined || hit.indexedAt >= indexedAfter)) {
          best.set(hit.fileId, hit);
        }
      }
      return [...best.values()].slice(0, maxResults);
    },
    async idle() {
      while (running.size > 0 || embedding) {
        await Promise.all([...running, embedding]);
      }
    },
    async close() {
      closing.abort(new Error('search index closing'));
      await Promise.allSettled([...running, embedding]);
      if (ownsPool) {
        await pool.close();
      }
    },
  };
}
