/**
 * The local search index behind `local:search`, and the `FileIndex` file storage calls: a stored file's text
 * is extracted and cut into ~1,000-character passages in a worker (pdf.js, html-to-text, passages.ts). On a
 * SQLite database file that worker also writes them (`index-passages` job, engines/text/index-passages.ts: its
 * own connection, short transactions) and the main thread learns only how many; on PostgreSQL or an in-memory
 * database they come to the main thread in parts (`extract-passages`) and the paced writer (passage-writer.ts)
 * stores them. A 10 MB file is ten thousand passages; a deleted file's passages are dropped. Indexing never throws to its caller: it
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
import { createMediaPool, type MediaPool, type MediaSlot } from '../../engines/media-pool.js';
import { foregroundRequests } from '../../engines/pool/foreground.js';
import type { ExtractedPassages } from '../../engines/text/extract-passages.js';
import {
  DEFAULT_EXTRACTION_LIMITS,
  type ExtractionLimits,
  type ExtractTextInput,
} from '../../engines/text/extract-text.js';
import { safeMatchExpression } from '../../engines/text/safe-match.js';
import { textKindOf } from '../../engines/text/text-kind.js';
import type { IndexedPassages } from '../../engines/text/index-passages.js';
import type { PassageHit, PassageStore } from '../../storage/passage-store.js';
import type { ProviderLogger } from '../provider-logger.js';
import { createPassageWriter } from './passage-writer.js';
import { fuseByRank } from './rank-fusion.js';

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
  /**
   * The same for passages stored in a SQLite database file, by a worker that reads their texts on its own
   * connection (the built-in model: engines/embed/embed-passages.ts), so that no text crosses the event loop: the
   * vectors of the passages still there, for the index to store. Absent for upstream models.
   */
  embedStoredPassages?(
    database: string,
    ids: number[],
    signal: AbortSignal,
    keyId: string,
  ): Promise<Array<{ id: number; vector: Float32Array }>>;
}

/**
 * Passages claimed per round of the background embedding (one embedding call per key among them). Each batch is a
 * short synchronous stretch on the event loop (the claim, the vectors' store, the structured clone from the
 * worker); between batches the loop takes a turn (setImmediate), so a chat call arriving meanwhile waits for one
 * batch, not for a whole file.
 */
export const WRITE_BATCH = 25;
/**
 * Passages claimed per round when the background worker reads them itself: the event loop's part of a round (the
 * claim, two small messages, the vectors' store) grows little with it, and each round costs the loop ~0.1 ms of
 * messaging whatever its size.
 */
export const WORKER_EMBED_BATCH = 100;
/** The extraction worker's niceness (worker-pool.ts): below the event loop's 0, above background embedding's 19. */
export const EXTRACTION_NICENESS = 10;
/** One turn of the event loop: the I/O callbacks (chat requests) waiting now run before the next batch. */
const loopTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
/**
 * How long a claim on passages to embed lives (passage-store.ts `claimUnembedded`): far longer than one batch's
 * call takes; a process that dies holding one leaves its passages to the next round after it.
 */
export const EMBED_CLAIM_MS = 5 * 60_000;
/** Why a file has no text to index, as `FileText` says it. */
type Refused = Extract<FileText, { refused: string }>;
/** What the writing of a file's passages came to: whether any were written, and whether the text was cut. */
type Written = { written: boolean; truncated?: boolean };
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
 * catches the one page whose parse never returns. pdf.js parses a 20-page PDF in under a second; the rest is for
 * the worker's writing of the passages (index-passages.ts), ~1–2 s of CPU for the 16,000 of the largest text,
 * taken at niceness 10 from what a busy machine leaves over.
 */
const EXTRACTION_TIMEOUT_MS = 60_000;
/** Candidate passages read per result wanted, so that dropping a file's second-best passages still fills the page. */
const CANDIDATES_PER_RESULT = 4;

/**
 * The file's bytes, read a chunk at a time into one ArrayBuffer of their own: no chunk holds the loop longer than its
 * copy (a join at the end copied 10 MB at once), and the whole buffer is handed to the worker, not copied to it.
 * `expected` is the stored size; a stream that gives more (never, with a consistent store) still reads right.
 */
async function readAll(stream: Readable, expected: number, limit: number): Promise<Uint8Array | undefined> {
  let whole = new Uint8Array(Math.min(expected, limit));
  let size = 0;
  for await (const piece of stream) {
    const chunk = piece as Uint8Array;
    if (size + chunk.length > limit) {
      stream.destroy();
      return undefined;
    }
    if (size + chunk.length > whole.length) {
      const grown = new Uint8Array(Math.min(limit, Math.max(whole.length * 2, size + chunk.length)));
      grown.set(whole.subarray(0, size));
      whole = grown;
    }
    whole.set(chunk, size);
    size += chunk.length;
  }
  return size === whole.length ? whole : whole.slice(0, size);
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
  /** The stop flags of the worker writes running now, per file (writeInWorker). */
  const cancels = new Map<string, Set<Int32Array>>();
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
    // The built-in model on a database file: the worker reads the texts, the loop sends ids (see PassageEmbedder).
    const database = current.embedStoredPassages && passages.databaseFile;
    const batchSize = database ? WORKER_EMBED_BATCH : WRITE_BATCH;
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
          const until = at + EMBED_CLAIM_MS;
          // The worker reads the texts itself: the claim on a database file brings back only ids and keys.
          const batch: Array<{ id: number; keyId: string; title?: string; text?: string }> =
            database && passages.claimUnembeddedIds
              ? await passages.claimUnembeddedIds(current.model, batchSize, at, until, cursor)
              : await passages.claimUnembedded(current.model, batchSize, at, until, cursor);
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
              if (database) {
                const ids = owned.map((passage) => passage.id);
                const embedded = await current.embedStoredPassages!(database, ids, closing.signal, keyId);
                await passages.storeVectors(current.model, embedded);
                // A passage removed since its claim has no vector; its claim went with it.
                continue;
              }
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
   * Runs one extraction job on the file's bytes in the pool (its fair queue, its caps, a fresh worker after one
   * ran out of memory): what `add` indexes and `text` answers come from the same extraction, so `read_file` shows
   * exactly what search reads.
   */
  async function extract<T>(
    file: IndexableFile,
    signal: AbortSignal,
    run: (slot: MediaSlot, input: ExtractTextInput, transfer: ArrayBuffer[]) => Promise<T>,
  ): Promise<T | Refused> {
    const kind = textKindOf(file.mediaType, file.filename);
    if (!kind) {
      return { refused: 'not_text', reason: `A ${file.mediaType} file is not text.` };
    }
    if (file.bytes > maxFileBytes) {
      return tooLarge();
    }
    const bytes = await readAll(await file.open(), file.bytes, maxFileBytes);
    if (!bytes) {
      return tooLarge();
    }
    try {
      // Moved to the worker, not copied: nothing here reads the bytes again.
      const transfer = [bytes.buffer as ArrayBuffer];
      return await pool.use(signal, (slot) => run(slot, { bytes, kind, limits }, transfer), { owner: file.keyId });
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

  /** Tells the extraction workers writing the file's passages to stop (index-passages.ts `cancel`). */
  function cancelWrites(fileId: string): void {
    for (const flag of cancels.get(fileId) ?? []) {
      Atomics.store(flag, 0, 1);
    }
  }

  /**
   * The extraction worker extracts and writes the file's passages itself, on its own connection to `database`;
   * the main thread only hears how many. Its writes stop once `remove` or a newer `add` of the file (or `close`)
   * sets the flag.
   */
  async function writeInWorker(file: IndexableFile, database: string): Promise<Written | Refused> {
    const cancel = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
    const flags = cancels.get(file.id) ?? new Set<Int32Array>();
    cancels.set(file.id, flags.add(cancel));
    try {
      const indexed: IndexedPassages | Refused = await extract(file, closing.signal, (slot, input, transfer) =>
        slot.run(
          'index-passages',
          {
            ...input,
            database,
            file: { fileId: file.id, keyId: file.keyId, title: file.filename },
            indexedAt: now(),
            cancel,
            foreground: foregroundRequests,
          },
          { transfer },
        ),
      );
      if ('refused' in indexed) {
        return indexed;
      }
      return { written: indexed.written > 0, ...(indexed.truncated && { truncated: true }) };
    } catch (error) {
      // What the worker wrote of a file it then failed on (its memory, the time limit) must not be searched.
      await passages.remove(file.id);
      throw error;
    } finally {
      flags.delete(cancel);
      if (flags.size === 0) {
        cancels.delete(file.id);
      }
    }
  }

  /** The passages come to the main thread in parts, and the paced writer stores them as they arrive. */
  async function writeOnLoop(file: IndexableFile, mine: number): Promise<Written | Refused> {
    const writer = createPassageWriter(
      passages,
      { fileId: file.id, keyId: file.keyId, title: file.filename },
      now(),
      () => generations.get(file.id) === mine && !closing.signal.aborted,
    );
    let extracted: ExtractedPassages | Refused;
    try {
      // Written as the worker's parts arrive (a 10 MB file's first passages are searchable while the rest cross).
      extracted = await extract(file, closing.signal, (slot, input, transfer) =>
        slot.run('extract-passages', input, { onPart: (part) => writer.add(part as string[]), transfer }),
      );
    } catch (error) {
      // What the parts wrote of a file that then failed must not be searched.
      await writer.discard();
      throw error;
    }
    if ('refused' in extracted) {
      await writer.discard();
      return extracted;
    }
    writer.add(extracted.passages);
    await writer.end();
    return { written: writer.started, ...(extracted.truncated && { truncated: true }) };
  }

  async function index(file: IndexableFile, mine: number): Promise<FileIndexState> {
    const admitted = admit(file);
    if (admitted.status !== 'indexing') {
      return admitted;
    }
    let outcome: Written | Refused;
    try {
      outcome = passages.databaseFile
        ? await writeInWorker(file, passages.databaseFile)
        : await writeOnLoop(file, mine);
    } catch (error) {
      logger?.warn({ fileId: file.id, err: error }, 'file not indexed for search');
      return stoppedState(error);
    }
    if ('refused' in outcome) {
      logger?.warn({ fileId: file.id, bytes: file.bytes, refused: outcome.refused }, 'file not indexed for search');
      return {
        status: outcome.refused === 'not_text' ? 'not_indexed' : 'failed',
        code: outcome.refused,
        reason: outcome.reason,
      };
    }
    if (outcome.written) {
      if (generations.get(file.id) !== mine) {
        // Removed (or added again) while the passages were written: a backend whose writes may overtake each
        // other must not keep this stale text, so it is removed once more; a newer add writes its own.
        await passages.remove(file.id);
      }
      embedPending();
    }
    if (outcome.truncated) {
      return {
        status: 'indexed',
        code: 'truncated',
        reason: `Only the first ${limits.maxCharacters} characters of the file's text are indexed (OMNIGATE_INDEX_MAX_CHARACTERS).`,
      };
    }
    return { status: 'indexed' };
  }

  return {
    admit,
    add(file) {
      const mine = ++generation;
      generations.set(file.id, mine);
      // An earlier add of the file still writing stops: this one writes the file's passages.
      cancelWrites(file.id);
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
      return extract(file, AbortSignal.any([closing.signal, signal]), (slot, input, transfer) =>
        slot.run('extract-text', input, { transfer }),
      );
    },
    async remove(fileId) {
      generations.set(fileId, ++generation);
      // Before the delete: a worker transaction committed after it would otherwise leave passages behind.
      cancelWrites(fileId);
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
      for (const fileId of cancels.keys()) {
        cancelWrites(fileId);
      }
      closing.abort(new Error('search index closing'));
      await Promise.allSettled([...running, embedding]);
      if (ownsPool) {
        await pool.close();
      }
    },
  };
}
