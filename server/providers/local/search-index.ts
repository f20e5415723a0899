/**
 * The local search index behind `local:search`, and the `FileIndex` file storage calls: a stored file's text
 * is extracted in a worker (`extract-text` job: pdf.js, html-to-text), cut into ~1,000-character passages and
 * written to the passage store; a deleted file's passages are dropped. Indexing never throws to its caller —
 * a file that is not text, or that fails to parse, is logged and left unindexed.
 *
 * Extraction has its own pool instance (one worker, a long queue served round-robin across keys, a cap per key, a
 * 256 MB heap) rather than the media pool: uploads are background work, and a media pool busy with renders would
 * refuse them with 429 and leave files unindexed.
 * The worker exits after a minute idle, so a server that never indexes never holds one.
 */
import type { Readable } from 'node:stream';
import { DEFAULT_EXTRACTION_PER_KEY } from '../../config.js';
import { ApiError } from '../../core/api-error.js';
import type { FileIndex, FileText, IndexableFile } from '../../core/file-index.js';
import { createMediaPool, type MediaPool } from '../../engines/media-pool.js';
import { splitIntoPassages } from '../../engines/text/passages.js';
import { safeMatchExpression } from '../../engines/text/safe-match.js';
import { textKindOf } from '../../engines/text/text-kind.js';
import type { PassageHit, PassageStore } from '../../storage/passage-store.js';
import type { ProviderLogger } from '../provider-logger.js';

export interface LocalSearchIndex extends FileIndex {
  text(file: IndexableFile, signal: AbortSignal): Promise<FileText>;
  /** The key's passages best matching the query, at most one per file, best first. */
  search(query: { keyId: string; query: string; maxResults: number; indexedAfter?: number }): PassageHit[];
  /** Resolves when every `add` started so far has finished (tests, shutdown). */
  idle(): Promise<void>;
  close(): Promise<void>;
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
  now?: () => number;
}

export const DEFAULT_MAX_INDEXED_FILE_BYTES = 64 * 1024 * 1024;
/** pdf.js parses a 20-page PDF in under a second; a minute is for the pathological file, then it is dropped. */
const EXTRACTION_TIMEOUT_MS = 60_000;
/** The extraction worker's heap: a PDF whose parse needs more (a decompression bomb) is refused as too large. */
const EXTRACTION_HEAP_MB = 256;
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
  return new Uint8Array(Buffer.concat(pieces));
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
    });
  const ownsPool = options.pool === undefined;
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_INDEXED_FILE_BYTES;
  const now = options.now ?? Date.now;
  const closing = new AbortController();
  /** The latest `add` of each file; a `remove` (or a newer `add`) while one runs makes its result stale. */
  const generations = new Map<string, number>();
  const running = new Set<Promise<void>>();
  let generation = 0;

  /** What `add` indexes and `text` answers: one extraction, so `read_file` shows exactly what search reads. */
  async function extract(file: IndexableFile, signal: AbortSignal): Promise<FileText> {
    const kind = textKindOf(file.mediaType, file.filename);
    if (!kind) {
      return { refused: 'not_text' };
    }
    if (file.bytes > maxFileBytes) {
      return { refused: 'too_large' };
    }
    const bytes = await readAll(file.open(), maxFileBytes);
    if (!bytes) {
      return { refused: 'too_large' };
    }
    let text: string | null;
    try {
      ({ text } = await pool.use(signal, (slot) => slot.run('extract-text', { bytes, kind }), { owner: file.keyId }));
    } catch (error) {
      if (error instanceof ApiError && error.code === 'engine_out_of_memory') {
        logger?.warn({ fileId: file.id, bytes: file.bytes, reason: error.message }, 'text extraction ran out of memory');
        return { refused: 'too_large' };
      }
      throw error;
    }
    return text === null ? { refused: 'not_text' } : { text };
  }

  async function index(file: IndexableFile, mine: number): Promise<void> {
    if (!textKindOf(file.mediaType, file.filename)) {
      return;
    }
    const extracted = await extract(file, closing.signal);
    if ('refused' in extracted && extracted.refused === 'too_large') {
      logger?.warn({ fileId: file.id, bytes: file.bytes }, 'file too large to index for search');
      return;
    }
    if (generations.get(file.id) !== mine) {
      return;
    }
    const pieces = 'text' in extracted ? splitIntoPassages(extracted.text) : [];
    passages.replace({ fileId: file.id, keyId: file.keyId, title: file.filename }, pieces, now());
  }

  return {
    add(file) {
      const mine = ++generation;
      generations.set(file.id, mine);
      const task = index(file, mine)
        .catch((error: unknown) => {
          logger?.warn({ fileId: file.id, err: error }, 'file not indexed for search');
        })
        .finally(() => {
          running.delete(task);
          if (generations.get(file.id) === mine) {
            generations.delete(file.id);
          }
        });
      running.add(task);
      return task;
    },
    text(file, signal) {
      return extract(file, AbortSignal.any([closing.signal, signal]));
    },
    remove(fileId) {
      generations.set(fileId, ++generation);
      passages.remove(fileId);
    },
    search({ keyId, query, maxResults, indexedAfter }) {
      const match = safeMatchExpression(query);
      if (!match) {
        return [];
      }
      const hits = passages.search({ keyId, match, limit: maxResults * CANDIDATES_PER_RESULT });
      const best = new Map<string, PassageHit>();
      for (const hit of hits) {
        if (!best.has(hit.fileId) && (indexedAfter === undefined || hit.indexedAt >= indexedAfter)) {
          best.set(hit.fileId, hit);
        }
      }
      return [...best.values()].slice(0, maxResults);
    },
    async idle() {
      while (running.size > 0) {
        await Promise.all(running);
      }
    },
    async close() {
      closing.abort(new Error('search index closing'));
      await Promise.allSettled(running);
      if (ownsPool) {
        await pool.close();
      }
    },
  };
}
